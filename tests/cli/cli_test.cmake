# The command line: help and version answer and state the exit statuses;
# every subcommand exits 0 ok, 1 failure at run time, 2 bad usage. The runs
# themselves (off a terminal, on one, --json, the report drawn again,
# compare) are cli_run_test.cmake's.
include(${CMAKE_CURRENT_LIST_DIR}/../support/expect_run.cmake)

file(REMOVE_RECURSE ${WORK})
expect_run(0 "run" ${SECMODE} --help)
expect_run(0 "2 bad usage" ${SECMODE} --help)
expect_run(0 "--quick" ${SECMODE} run --help)
expect_run(0 "exits with status 130 (SIGINT)" ${SECMODE} run --help)
foreach(cmd run modes report compare nconnect serve load smb-load probe predict lab trace)
  expect_run(0 "1 failure at run time" ${SECMODE} ${cmd} --help)
  # ... once (a subcommand is given its parent's footer by CLI11).
  execute_process(COMMAND ${SECMODE} ${cmd} --help OUTPUT_VARIABLE help_text)
  string(REGEX MATCHALL "Exit status \\(every subcommand\\)" found "${help_text}")
  list(LENGTH found times)
  if(NOT times EQUAL 1)
    message(FATAL_ERROR "secmode ${cmd} --help states the exit statuses ${times} times, not once")
  endif()
endforeach()
expect_run(0 "secmode 0." ${SECMODE} --version)
expect_run(0 "krb5p" ${SECMODE} modes)
# --recommend states what it assumed and measured, and the alternatives.
expect_run(0 "alternatives at 64 slots" ${SECMODE} nconnect --recommend --window 8 --ops 2000
           --max-slots 64 --seeds 1 --cores 2 --slice-ns 3000000)
expect_run(0 "wakeup preemption: p10 run" ${SECMODE} nconnect --recommend --window 8 --ops 2000
           --max-slots 64 --seeds 1)

# Bad usage: 2, with the cause named.
expect_run(2 "A subcommand is required" ${SECMODE})
expect_run(2 "--quick and --full exclude each other" ${SECMODE} lab --quick --full)
expect_run(2 "unknown --modes family 'krb6'" ${SECMODE} lab --modes krb6)
expect_run(2 "unknown --modes family 'krb5p'" ${SECMODE} lab --smb --modes krb5p)
expect_run(2 "SMB 2.1, which has no multichannel" ${SECMODE} lab --smb --modes smb-sign-hmac-sha256)
expect_run(2 "--delay-ms" ${SECMODE} serve --delay-ms -1)
expect_run(2 "--delay-ms" ${SECMODE} load --delay-ms 20000)
expect_run(2 "--delay-ms" ${SECMODE} serve --delay-ms nan)
# GETATTR carries no data: any --size, 0 included (once a division by zero).
expect_run(0 "sys getattr" ${SECMODE} load --local --mode sys --op getattr --size 0 --seconds 0.2)
# One spelling in every command: a mode is family[:enctype[:engine]] (the
# native engine runs one context's crypto in parallel), the connections are
# --connections. The old spellings still work and say what to write instead.
expect_run(0 "\"crypto_threads\": \"parallel\"" ${SECMODE} load --local
           --mode krb5p:aes128-cts-hmac-sha256-128:native --connections 2 --seconds 0.2)
expect_run(0 "--mode krb5p --engine native is an old spelling; write --mode krb5p::native"
           ${SECMODE} load --local --mode krb5p --engine native --seconds 0.2)
expect_run(0 "--nconnect 2 is an old spelling; write --connections 2" ${SECMODE} load --local
           --mode sys --nconnect 2 --seconds 0.2)
expect_run(0 "--nconnect 4 is an old spelling; write --connections 4" ${SECMODE} nconnect
           --nconnect 4 --slots 64 --window 128)
# nconnect names the context and skew knobs as load does.
expect_run(0 "--per-connection-context is an old spelling; write --context-per-connection"
           ${SECMODE} nconnect --per-connection-context --slots 64 --window 128)
expect_run(0 "--skew-conn 1 is an old spelling; write --skew-connection 1" ${SECMODE} nconnect
           --skew-conn 1 --skew-ns 1000 --slots 64 --window 128)
expect_run(2 "name the enctype and engine once" ${SECMODE} load
           --mode krb5p:aes128-cts-hmac-sha256-128 --engine native --port 1)
expect_run(2 "unknown engine 'heimdal'" ${SECMODE} load --mode krb5p::heimdal --port 1)
expect_run(2 "unknown RPC mode 'smb-plain'" ${SECMODE} probe --mode smb-plain --port 1)
expect_run(2 "unknown command 'no-such-command'" ${SECMODE} no-such-command)
expect_run(2 "give --local, or --host, --principal and --share" ${SECMODE} smb-load)
expect_run(2 "unknown SMB mode" ${SECMODE} smb-load --local --mode smb-enc-des)
expect_run(2 "unknown SMB operation 'stat'" ${SECMODE} smb-load --local --op stat)
expect_run(2 "--outstanding" ${SECMODE} smb-load --local --outstanding 0)
expect_run(2 "no --host" ${SECMODE} smb-load --local --host x)
expect_run(2 "--round-trip-ms" ${SECMODE} smb-load --local --round-trip-ms 20000)
expect_run(2 "--round-trip-ms" ${SECMODE} smb-load --local --round-trip-ms nan)
expect_run(2 "--sizes" ${SECMODE} run --sizes abc)
expect_run(2 "--repetitions" ${SECMODE} run --repetitions 0)
expect_run(2 "--sizes" ${SECMODE} run --sizes 999999999999)
expect_run(2 "no-such-flag" ${SECMODE} run --no-such-flag)
expect_run(2 "unknown mode 'nfs'" ${SECMODE} run --modes nfs --out ${WORK}/x)
if(EXISTS ${WORK}/x)
  message(FATAL_ERROR "a refused run created its output directory")
endif()
expect_run(2 "unknown engine 'heimdal'" ${SECMODE} run --modes krb5p:aes256-cts-hmac-sha1-96:heimdal)
expect_run(2 "DIR is required" ${SECMODE} report)
expect_run(2 "no results.json" ${SECMODE} report ${WORK})
expect_run(2 "unknown value 'reset'" ${SECMODE} nconnect --reaction reset)
expect_run(2 "choose one" ${SECMODE} nconnect --sweep --recommend)
expect_run(2 "only with --validate" ${SECMODE} nconnect --full)
expect_run(2 "no point of the grid matches" ${SECMODE} nconnect --validate --points nomatch
           --out ${WORK}/nomatch)
if(EXISTS ${WORK}/nomatch)
  message(FATAL_ERROR "a refused validation created its output directory")
endif()
expect_run(2 "not a regular expression" ${SECMODE} nconnect --validate --points "(" --out ${WORK}/x)
expect_run(2 "choose one" ${SECMODE} run --quick --full --out ${WORK}/x)
expect_run(2 "--pin: CPU 1000 is not one this process may run on (allowed: " ${SECMODE} run
           --pin 1000 --modes sys --out ${WORK}/x)
expect_run(2 "unknown engine" ${SECMODE} serve --engine heimdal --seconds 1)
expect_run(2 "reaction: unknown value 'sometimes'" ${SECMODE} serve --reaction sometimes --seconds 1)
# The flag's old name still works and says what to write instead.
expect_run(2 "--window-policy sometimes is an old spelling; write --reaction sometimes" ${SECMODE} serve
           --window-policy sometimes --seconds 1)
expect_run(2 "--window" ${SECMODE} serve --window 0 --seconds 1)
# Every limit of the server is a flag its help explains.
foreach(flag max-connections max-reply max-gather max-queue max-backlog idle-timeout record-timeout
        send-timeout max-contexts context-idle no-replay-cache)
  expect_run(0 "--${flag}" ${SECMODE} serve --help)
endforeach()
expect_run(2 "--max-connections" ${SECMODE} serve --max-connections 0 --seconds 1)
expect_run(2 "--idle-timeout" ${SECMODE} serve --idle-timeout -1 --seconds 1)
expect_run(2 "unknown NFS operation" ${SECMODE} load --op mkdir)
# load's deadlines: in --help, and refused when negative or shorter than the run.
foreach(flag --connect-timeout-ms --init-timeout-ms --deadline --destroy-timeout-ms)
  expect_run(0 "${flag}" ${SECMODE} load --help)
  expect_run(2 "${flag}" ${SECMODE} load --port 1 ${flag} -1)
endforeach()
expect_run(2 "shorter than its warm-up and measured time" ${SECMODE} load --port 1 --seconds 5
           --deadline 1)
expect_run(2 "mode sys has no sequence window" ${SECMODE} probe --port 1 --mode sys)
expect_run(2 "unknown --server-kind 'nfs9'" ${SECMODE} load --port 1 --server-kind nfs9)
expect_run(2 "names no file" ${SECMODE} load --port 1 --server-kind nfs41 --read-path /)
expect_run(2 "unknown RPC mode 'krb5q'" ${SECMODE} probe --port 1 --mode krb5q)
expect_run(2 "--silence-ms" ${SECMODE} probe --port 1 --silence-ms 0)
expect_run(2 "reaction: unknown value" ${SECMODE} probe --local --reaction sometimes)

# Failure at run time: 1.
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/file "not a directory")
expect_run(1 "secmode run:" ${SECMODE} run --quick --modes sys --sizes 64 --out ${WORK}/file/sub)
file(MAKE_DIRECTORY ${WORK}/corrupt)
file(WRITE ${WORK}/corrupt/results.json "{\"schema\":")
expect_run(1 "not valid JSON" ${SECMODE} report ${WORK}/corrupt)
# secmode trace: a file that is no capture, one that is not there, a window beyond its bound.
expect_run(2 "${WORK}/file: not a capture" ${SECMODE} trace ${WORK}/file)
expect_run(2 "${WORK}/none.pcap" ${SECMODE} trace ${WORK}/none.pcap)
expect_run(2 "--window" ${SECMODE} trace ${WORK}/file --window 5000)
expect_run(2 "excludes" ${SECMODE} trace ${WORK}/file --json --out ${WORK}/x)
expect_run(2 "--side" ${SECMODE} trace ${WORK}/file --side middle)
# --recommend and --cores only with --simulate; a capture of AUTH_SYS alone
# has no window to model.
expect_run(2 "--simulate" ${SECMODE} trace ${WORK}/file --recommend)
expect_run(2 "--simulate" ${SECMODE} trace ${WORK}/file --cores 2)
# (The fuzz seed is a capture after the fuzz target's one byte of choice.)
execute_process(COMMAND tail -c +2
                  ${CMAKE_CURRENT_LIST_DIR}/../fuzz/corpus/trace_capture_fuzz/capture-sys
                OUTPUT_FILE ${WORK}/sys.pcap RESULT_VARIABLE tail_rc)
if(NOT tail_rc EQUAL 0)
  message(FATAL_ERROR "could not copy the AUTH_SYS capture: ${tail_rc}")
endif()
expect_run(2 "no RPCSEC_GSS DATA call" ${SECMODE} trace ${WORK}/sys.pcap --simulate)
# A port is RPC's or SMB's, not both; an SMB capture's sessions and commands.
expect_run(2 "port 445 is given both for RPC and for SMB" ${SECMODE} trace ${WORK}/sys.pcap
           --rpc-port 445)
expect_run(0 "--smb-port" ${SECMODE} trace --help)
execute_process(COMMAND tail -c +2
                  ${CMAKE_CURRENT_LIST_DIR}/../fuzz/corpus/trace_capture_fuzz/capture-smb
                OUTPUT_FILE ${WORK}/smb.pcap RESULT_VARIABLE tail_rc)
if(NOT tail_rc EQUAL 0)
  message(FATAL_ERROR "could not copy the SMB capture: ${tail_rc}")
endif()
expect_run(0 "SMB sessions: connections" ${SECMODE} trace ${WORK}/smb.pcap)
expect_run(1 "secmode load:" ${SECMODE} load --port 1 --seconds 0.2)
expect_run(1 "the probe's connection: connect 127.0.0.1:1" ${SECMODE} probe --port 1)
# The probe against secmode's own server finds the window and policy it was given.
expect_run(0 "model it: secmode nconnect --window 48 --reaction discard-context" ${SECMODE} probe
           --local --window 48 --reaction discard-context)
expect_run(1 "opening connection 1 of 4: connect 127.0.0.1:1" ${SECMODE} load --port 1 --seconds 0.2)
expect_run(1 "no Kerberos credentials in ccache FILE:${WORK}/no.ccache" ${SECMODE} load --port 1
           --mode krb5 --ccache FILE:${WORK}/no.ccache --seconds 0.2)

file(REMOVE_RECURSE ${WORK})
