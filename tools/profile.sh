#!/usr/bin/env bash
# `make profile`: where the CPU of the small-message path and of the whole
# call path goes, by category, into build/profile/profile.md. Sampled with
# perf's cpu-clock, a software event (it works in VMs that expose no
# hardware counters), symbols grouped by what they do:
#  1. krb5p seal+open of 128 B per enctype with the native engine, and the
#     OpenSSL bound beside it (gss_bench BM_RoundTrip: what the report's
#     engines-vs-bound table compares): ns per round trip per category, the
#     benchmark's own time split by the samples' shares;
#  2. end-to-end GETATTR in sys, krb5, krb5i and krb5p (native engine;
#     secmode load --local: client and in-process server on loopback, 4
#     connections x 64 calls, the server's window 65536 as the e2e
#     section's wide-window control: no call falls out of it, so no drop
#     or resend is counted as the call path's), kernel included: CPU ns per
#     call per category, the modes side by side.
# PROFILE_SECONDS (default 3) is how long each part is sampled.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build/release
OUT=build/profile
SECS=${PROFILE_SECONDS:-3}
rm -rf "$OUT"
mkdir -p "$OUT"
perf_ok() { perf stat -e cpu-clock true >/dev/null 2>&1; }
if ! perf_ok; then
  echo "make profile: perf cannot sample here (perf stat -e cpu-clock failed)" >&2
  exit 1
fi

# The category of a symbol: first match wins. "[k]" marks kernel symbols.
CATEGORIES='
aes          AES (OpenSSL, named)        aesni|(^|[^a-z])aes_|AES_|_aes[0-9]
sha          SHA / HMAC                  sha1_|sha256_|sha512_|SHA1_|SHA256_|SHA512_|Hmac
asm          OpenSSL, unnamed code       libcrypto[^ ]* +\[\.\] 0x
evp          EVP dispatch and set-up     (^|[^a-z])EVP_|evp_|ossl_|OSSL_|CRYPTO_[a-lno-z]|cipher_|drbg|RAND_
copy         copies, fills, compares     memcpy|memmove|memset|cleanse|memcmp|bcmp
heap         heap                        malloc|free|_int_|realloc|calloc|operator new|operator delete|tcache
locks        locks and futexes (user)    pthread_mutex|lll_lock|lll_unlock|pthread_cond|__pthread|futex
start        start-up (dynamic loader)   ld-linux
clock        clock reads (vDSO)          \[vdso\]
ktcp         kernel: TCP/IP, loopback    \[k\] (tcp_|__tcp|tcp[0-9]|ip_|__ip_|ipv4|skb_|__skb|kfree_skb|alloc_skb|__alloc_skb|sk_|__sk_|sock_|__sock|__dev_|dev_|netif_|__netif|loopback|napi|__napi|net_rx|inet_|__inet|release_sock|__release_sock|lock_sock|__sys_sendto|__sys_recvfrom|bbr_|eth_|dst_|process_backlog|__local_bh_enable|do_softirq|__do_softirq|handle_softirqs)
ksched       kernel: scheduler, wakeups  \[k\] (schedule|__schedule|pick_next|enqueue_|dequeue_|try_to_wake_up|ttwu|wake_up|__wake_up|update_curr|__switch_to|finish_task_switch|select_task_rq|sched_|__sched|psi_|futex|hrtimer|clockevents|tick_|wait_woken|woken_wake)
ksys         kernel: syscall entry/exit  \[k\] (entry_SYSCALL|syscall_|do_syscall|__x64_sys|ksys_|exit_to_user|fpregs|fpu_|__fdget|fdget)
kother       kernel: other               \[k\]
rpc          secmode rpc (XDR, RPC, TCP)  secmode::rpc::
gss          secmode gss (tokens)        secmode::gss::
secmode      secmode other               secmode::
other        other user code             .
'

# perf script samples (frames leaf first, "ip sym (dso)", a blank line
# after each) -> per category share (percent). A user-space sample goes by
# its leaf. A kernel sample goes by the first frame, leaf upward, that names
# a kernel category: in a VM, samples that land while interrupts are off are
# charged where they come back on (pvm_irq_enable), which says nothing, so
# the frames above it say what the kernel was doing (a context switch, the
# loopback's softirq under a send). libcrypto ships without the symbols of
# its assembly (AES-NI, SHA): those samples are "OpenSSL, unnamed code".
categorize() {
  awk -v cats="$CATEGORIES" '
    BEGIN {
      n = split(cats, lines, "\n"); k = 0
      for (i = 1; i <= n; ++i) {
        if (lines[i] ~ /^[ \t]*$/) continue
        key = lines[i]; sub(/[ \t].*/, "", key)
        rest = lines[i]; sub(/^[^ \t]+[ \t]+/, "", rest)
        label = substr(rest, 1, 28); sub(/[ \t]+$/, "", label)
        re = substr(rest, 29); sub(/^[ \t]+/, "", re)
        ++k; keys[k] = key; labels[key] = label; res[key] = re
      }
      nk = k; nf = 0; total = 0
    }
    function frame(line,   ip, sym, dso, kern) {
      sub(/^[ \t]+/, "", line)
      ip = line; sub(/ .*/, "", ip)
      sym = line; sub(/^[^ ]+ /, "", sym); sub(/ \([^()]*\)$/, "", sym)
      dso = line; sub(/.*\(/, "", dso); sub(/\)$/, "", dso); sub(/.*\//, "", dso)
      kern = dso ~ /kernel/ ? "[k]" : "[.]"
      if (sym == "[unknown]") sym = "0x" ip
      return dso " " kern " " sym
    }
    function category(f, j) {
      for (j = 1; j <= nk; ++j) if (f ~ res[keys[j]]) return keys[j]
      return "other"
    }
    function finish(   i, c, found) {
      if (nf == 0) return
      ++total
      c = category(fr[1])
      if (fr[1] ~ /\[k\]/) {
        found = ""
        for (i = 1; i <= nf && fr[i] ~ /\[k\]/; ++i) {
          c = category(fr[i])
          if (c == "ktcp" || c == "ksched" || c == "ksys") { found = c; break }
        }
        c = found == "" ? "kother" : found
      }
      ++count[c]; nf = 0
    }
    /^[ \t]*$/ { finish(); next }
    { fr[++nf] = frame($0) }
    END {
      finish()
      for (j = 1; j <= nk; ++j)
        printf "%s\t%s\t%.2f\n", keys[j], labels[keys[j]], total ? 100 * count[keys[j]] / total : 0
    }'
}

# Sample a command with its call chains (its stdout kept in DATA.out); print
# perf script's frames of the process named COMM (not its children: a
# realm's KDC is set-up, not the path measured).
sample() {
  local data=$1 comm=$2; shift 2
  perf record -q -g -e cpu-clock -F 4000 -o "$data" -- "$@" >"$data.out" 2>"$data.err" || {
    cat "$data.err" >&2; return 1; }
  perf script -i "$data" --comms "$comm" -F ip,sym,dso 2>/dev/null
}

md="$OUT/profile.md.tmp"
{
  echo "# Where the CPU goes (make profile)"
  echo
  echo "Sampled with perf cpu-clock at 4 kHz for ${SECS} s each; $(uname -srm), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) logical CPUs; secmode $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty tree)'); $(date -u +%FT%TZ). Each row is the share of the samples in that category times the measured time, so a row is an estimate (a category under 1% of the samples is noise)."
  echo
} >"$md"

# 1. The small-message round trip.
enctypes="aes128-cts-hmac-sha1-96 aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha256-128 aes256-cts-hmac-sha384-192"
declare -A ns
{
  echo "## krb5p seal+open of 128 B: native engine against the OpenSSL bound"
  echo
  echo "ns per round trip (one seal and its open) by category; gss_bench BM_RoundTrip, the time its own timing gave."
  echo
} >>"$md"
table_rows=()
for e in $enctypes; do
  for who in native bound; do
    name="BM_RoundTrip/${who}/${e}/128"
    json="$OUT/${who}-${e}.json"
    report=$(sample "$OUT/${who}-${e}.data" gss_bench "$BUILD/bench/gss_bench" --benchmark_filter="^${name}(/|$)" \
      --benchmark_min_time="$SECS" --benchmark_format=json --benchmark_out="$json")
    t=$(python3 -c "import json,sys; b=json.load(open('$json'))['benchmarks'][0]; print(b['cpu_time'] if b['time_unit']=='ns' else 0)")
    ns[$who-$e]=$t
    echo "$report" | categorize >"$OUT/${who}-${e}.cat"
  done
done
{
  printf "| category |"; for e in $enctypes; do printf " %s native | bound |" "$e"; done; echo
  printf "|---|"; for e in $enctypes; do printf -- "---:|---:|"; done; echo
  while IFS=$'\t' read -r key label _; do
    printf "| %s |" "$label"
    for e in $enctypes; do
      for who in native bound; do
        pct=$(awk -F'\t' -v k="$key" '$1 == k { print $3 }' "$OUT/${who}-${e}.cat")
        awk -v p="$pct" -v t="${ns[$who-$e]}" 'BEGIN { printf " %.0f |", p * t / 100 }'
      done
    done
    echo
  done <"$OUT/native-aes128-cts-hmac-sha1-96.cat"
  printf "| **all** |"
  for e in $enctypes; do
    for who in native bound; do awk -v t="${ns[$who-$e]}" 'BEGIN { printf " **%.0f** |", t }'; done
  done
  echo
  printf "| bound / native |"
  for e in $enctypes; do
    awk -v a="${ns[bound-$e]}" -v b="${ns[native-$e]}" 'BEGIN { printf " %.2f | |", a / b }'
  done
  echo
  echo
} >>"$md"

# 2. The whole call path: an end-to-end GETATTR in each mode, side by side,
# so what a security mode adds beyond its crypto shows by category.
modes="sys krb5 krb5i krb5p"
declare -A per_call ops_of nsamples_of calls_of
for m in $modes; do
  mode=$m; [ "$m" = sys ] || mode="$m::native"
  report=$(sample "$OUT/getattr-$m.data" secmode "$BUILD/cli/secmode" load --local --mode "$mode" \
    --op getattr --connections 4 --slots 64 --window 65536 --seconds "$SECS")
  echo "$report" | categorize >"$OUT/getattr-$m.cat"
  # Every sample stands for 1/4000 s of one thread's CPU.
  nsamples_of[$m]=$(echo "$report" | awk 'NF == 0 && prev != 0 { ++n } { prev = NF } END { print n + (prev != 0) }')
  calls_of[$m]=$(python3 -c "import json; print(json.load(open('$OUT/getattr-$m.data.out'))['server']['calls'])")
  ops_of[$m]=$(python3 -c "import json; print(round(json.load(open('$OUT/getattr-$m.data.out'))['ops_per_second']))")
done
{
  echo "## End-to-end GETATTR: CPU per call by category, per mode"
  echo
  echo "secmode load --local --mode MODE[::native] --op getattr --connections 4 --slots 64 --window 65536 (no call falls out of the window) for ${SECS} s each: client and in-process server on loopback, kernel included; samples of the secmode process (250 us of CPU each) divided by the server's calls, warm-up and set-up included. Calls/s under the profiler: $(for m in $modes; do printf '%s %s; ' "$m" "${ops_of[$m]}"; done)"
  echo
  printf "| category |"; for m in $modes; do printf " %s ns/call | share |" "$m"; done; echo
  printf "|---|"; for m in $modes; do printf -- "---:|---:|"; done; echo
  while IFS=$'\t' read -r key label _; do
    printf "| %s |" "$label"
    for m in $modes; do
      awk -F'\t' -v k="$key" -v n="${nsamples_of[$m]}" -v c="${calls_of[$m]}" \
        '$1 == k { printf " %.0f | %.1f%% |", $3 / 100 * n * 250000 / c, $3 }' "$OUT/getattr-$m.cat"
    done
    echo
  done <"$OUT/getattr-sys.cat"
  printf "| **all** |"
  for m in $modes; do
    awk -v n="${nsamples_of[$m]}" -v c="${calls_of[$m]}" 'BEGIN { printf " **%.0f** | 100%% |", n * 250000 / c }'
  done
  echo
  echo
} >>"$md"
mv "$md" "$OUT/profile.md"
echo "profile: $OUT/profile.md"
