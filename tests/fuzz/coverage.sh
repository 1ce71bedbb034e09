#!/usr/bin/env bash
# `make fuzz-coverage`: clang source-based coverage (-fprofile-instr-generate
# -fcoverage-mapping) of the fuzz targets, each run once over its corpora
# (libFuzzer -runs=0 executes every input and stops): the committed seeds,
# plus what the last `make test` (build/asan/tests/fuzz/work/<target>) and
# `make fuzz` (build/asan/fuzz-corpus/<target>) grew, where they exist.
# Prints per function the regions and lines executed for the GSS paths
# (INIT handling, the window, the call MIC, body open/seal, the engines) and
# writes the whole report to build/fuzz-coverage/report.txt and an HTML view
# to build/fuzz-coverage/html/.
#   FUZZ_TARGETS  targets to measure (default: all five)
#   JOBS          build parallelism (default: nproc)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build/fuzz-coverage
targets=${FUZZ_TARGETS:-rpc_gss_fuzzer rpc_call_fuzzer rpc_record_fuzzer rpc_probe_fuzzer native_token_fuzz smb_parsers_fuzz smb_client_fuzz}
flags="-fprofile-instr-generate -fcoverage-mapping -fsanitize=fuzzer-no-link"

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fprofile-instr-generate" -DSECMODE_FUZZ=ON >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target $targets

rm -rf "$build/profiles"
mkdir -p "$build/profiles"
objects=()
for t in $targets; do
  corpora=(tests/fuzz/corpus/"$t")
  for extra in build/asan/tests/fuzz/work/"$t" build/asan/fuzz-corpus/"$t"; do
    if [[ -d "$extra" ]] && [[ -n "$(ls -A "$extra")" ]]; then corpora+=("$extra"); fi
  done
  inputs=$(find "${corpora[@]}" -type f | wc -l)
  echo "== $t: $inputs inputs from ${corpora[*]}"
  LLVM_PROFILE_FILE="$build/profiles/$t.profraw" "$build/tests/fuzz/$t" -runs=0 \
    -rss_limit_mb=2048 -malloc_limit_mb=256 "${corpora[@]}" 2>"$build/profiles/$t.log" ||
    { echo "$t failed on its corpus; see $build/profiles/$t.log" >&2; exit 1; }
  llvm-profdata-14 merge -sparse "$build/profiles/$t.profraw" -o "$build/profiles/$t.profdata"
  objects+=(-object "$build/tests/fuzz/$t")
done
# Every target defines LLVMFuzzerTestOneInput (and the harness helpers)
# differently, so llvm-profdata warns about "mismatched data" for those when
# merging; the library functions are the same code in every target.
llvm-profdata-14 merge -sparse "$build"/profiles/*.profraw -o "$build/profiles/all.profdata" \
  2>/dev/null

sources=(rpc/server_core.cc rpc/sequence_window.cc rpc/gss_body.cc rpc/gss_client.cc
         gss/native_protector.cc gss/seq_window.cc gss/mit_protector.cc gss/mit_iov_protector.cc
         gss/kcrypto.cc gss/cfx_token.cc smb/transform.cc smb/signing.cc smb/legs.cc)
report() {  # report PROFDATA BINARY [-object BINARY ...]
  local profile=$1
  shift
  llvm-cov-14 report "$@" -instr-profile="$profile" -show-functions -Xdemangler=c++filt \
    "${sources[@]}" 2>/dev/null
}
# The first -object is the binary, the rest are extra objects.
report "$build/profiles/all.profdata" "${objects[@]:1}" >"$build/report.txt"
llvm-cov-14 show "${objects[@]:1}" -instr-profile="$build/profiles/all.profdata" \
  -format=html -output-dir="$build/html" -Xdemangler=c++filt "${sources[@]}" >/dev/null 2>&1

# The functions of the GSS paths (issue 11 item 5): INIT handling, the
# window, the call MIC and dispatch, body open/seal, the engines' receive
# and send paths. Columns: regions and lines executed of all.
summary() {
  awk -v pat="$1" '
    NF > 10 && $0 ~ pat {
      n = NF; name = $1
      for (i = 2; i <= n - 9; ++i) name = name " " $i
      gsub(/\(anonymous namespace\)::/, "", name)
      sub(/\(.*/, "", name); sub(/^.*:secmode::/, "", name); sub(/^secmode::/, "", name)
      printf "  %-52s regions %4d/%-4d lines %4d/%-4d\n", name, $(n-8) - $(n-7), $(n-8), $(n-5) - $(n-4), $(n-5)
    }'
}
pattern='HandleGssControl|RpcServerCore::OpenCall|RpcServerCore::SealReply|RpcServerCore::HandleCall|RpcServerCore::WindowReaction|SequenceWindow::Check|OpenGssBody|SealGssBody|CheckInnerSeq|GssClientContext::(EncodeCall|DecodeReply|Establish)|NativeProtector::(Wrap|UnwrapImpl|GetMic|VerifyMic|CheckSequence)|SeqWindow::Check|MitProtector::(Wrap|Unwrap|GetMic|VerifyMic)|MitIovProtector::(Wrap|UnwrapInPlace|GetMic|VerifyMic)|UsageKeys::(Decrypt|EncryptInPlace)'
if [[ " $targets " == *" rpc_gss_fuzzer "* ]]; then
  echo
  echo "rpc_gss_fuzzer alone (executed / total):"
  report "$build/profiles/rpc_gss_fuzzer.profdata" "$build/tests/fuzz/rpc_gss_fuzzer" |
    summary "$pattern"
fi
echo
echo "all targets together (executed / total):"
summary "$pattern" <"$build/report.txt"
echo
echo "whole report: $build/report.txt   html: $build/html/index.html"
