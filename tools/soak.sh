#!/usr/bin/env bash
# `make soak`: runs the release build's peer-dependent and timing-sensitive
# tests SOAK_REPEATS times (default 5), then the tests labelled `soak` once,
# and prints one row per test: how often it ran, failed and was skipped.
# Exit status 1 if any run of any test failed (or a ctest run did not end
# with its results written), 0 otherwise.
#
#   SOAK_LABELS   ctest label regex repeated (default: see LABELS below)
#   SOAK_REPEATS  rounds of those labels (default 5)
#   SOAK_HOG=1    everything runs beside a CPU hog: stress-ng with two CPU
#                 workers, started here and stopped on exit, also on SIGINT
#   SOAK_JOBS     ctest -j (default: the number of CPUs, as `make test`)
#   BUILD         the ctest build tree (default build/release)
#
# Every round is a plain ctest run over the build tree (the release test
# preset's timeout and output on failure). What each test did comes from
# ctest's own records, not its console output: the JUnit file of the round
# (--output-junit) names every test that was selected, and ctest's
# LastTestsFailed.log (removed before each round) names each one that
# failed, timed out or could not run; a round that selects no test fails.
# A test that was skipped (its
# SKIP_REGULAR_EXPRESSION or return code: no root, a missing package) is
# counted as skipped, not as run. The records of every round stay in
# $BUILD/soak/<UTC time>/.
set -euo pipefail
cd "$(dirname "$0")/.."

# Peers (MIT gssrpc, tshark, nfs-ganesha, Samba, Chromium), namespaces and
# real sockets whose figures are judged: the labels a loaded or slow
# machine can fail. `long` is what `make test` leaves out (tests/README.md).
LABELS=${SOAK_LABELS:-'^(interop|lab|stress|validation|suite|cli|browser|long)$'}
REPEATS=${SOAK_REPEATS:-5}
JOBS=${SOAK_JOBS:-$(nproc)}
BUILD=${BUILD:-build/release}
HOG=${SOAK_HOG:-0}

if ! [[ "$REPEATS" =~ ^[1-9][0-9]*$ ]]; then
  echo "make soak: SOAK_REPEATS must be a whole number above 0, not '$REPEATS'" >&2
  exit 2
fi
if ! [[ "$JOBS" =~ ^[1-9][0-9]*$ ]]; then
  echo "make soak: SOAK_JOBS must be a whole number above 0, not '$JOBS'" >&2
  exit 2
fi
if [[ ! -f "$BUILD/CTestTestfile.cmake" ]]; then
  echo "make soak: no ctest tree in $BUILD (build it first)" >&2
  exit 2
fi

OUT="$BUILD/soak/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
FAILED_LOG="$BUILD/Testing/Temporary/LastTestsFailed.log"

hog_pid=""
stop_hog() {
  if [[ -n "$hog_pid" ]]; then
    # stress-ng leads its own process group (setsid): the group is its
    # workers and itself.
    kill -TERM -- "-$hog_pid" 2>/dev/null || kill -TERM "$hog_pid" 2>/dev/null || true
    wait "$hog_pid" 2>/dev/null || true
    hog_pid=""
  fi
}
trap stop_hog EXIT
trap 'stop_hog; trap - INT; kill -INT $$' INT
trap 'stop_hog; exit 143' TERM

if [[ "$HOG" == 1 ]]; then
  # setsid: its own group, so stop_hog ends the workers with it.
  setsid stress-ng --cpu 2 --timeout 0 --quiet &
  hog_pid=$!
  sleep 1
  if ! kill -0 "$hog_pid" 2>/dev/null; then
    echo "make soak: stress-ng did not start" >&2
    exit 1
  fi
  echo "== beside a CPU hog: stress-ng --cpu 2 (pid $hog_pid)"
fi

# One ctest round: $1 the round's name, then ctest's selection arguments.
# Writes $OUT/<name>.xml (JUnit) and $OUT/<name>.failed (the failed tests'
# names, one a line); a round whose JUnit file is missing is recorded as a
# failure of "(ctest round <name>)".
round() {
  local name=$1
  shift
  rm -f "$FAILED_LOG"
  echo "== round $name: ctest $*"
  local rc=0
  ctest --test-dir "$BUILD" -j "$JOBS" --timeout 600 --output-on-failure \
    --output-junit "$OUT/$name.xml" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
  tail -n 3 "$OUT/$name.log"
  # "N:name" lines; a name may itself hold a colon.
  if [[ -f "$FAILED_LOG" ]]; then
    sed -n 's/^[0-9][0-9]*://p' "$FAILED_LOG" >"$OUT/$name.failed"
  else
    : >"$OUT/$name.failed"
  fi
  if [[ ! -s "$OUT/$name.xml" ]] || { [[ $rc -ne 0 ]] && [[ ! -s "$OUT/$name.failed" ]]; }; then
    echo "(ctest round $name, exit $rc)" >>"$OUT/$name.failed"
  fi
}

ROUNDS=()
for ((i = 1; i <= REPEATS; i++)); do
  ROUNDS+=("repeat-$i")
  round "repeat-$i" -L "$LABELS" -LE '^soak$' --no-tests=error
done
ROUNDS+=(soak-once)
round soak-once -L '^soak$' --no-tests=ignore

# The table. Per round: every <testcase> of its JUnit file is one selected
# test (its name XML-escaped in the attribute; test output is in child
# elements, where every "<" is escaped, so no output line starts a
# testcase); status "notrun" that ctest did not list as failed is a skip.
# Prints "failures<TAB>runs<TAB>skips<TAB>name" per test.
tally() {
  awk -v out="$OUT" -v rounds="$*" '
    function attr(line, key,   s) {
      if (!match(line, " " key "=\"[^\"]*\"")) return ""
      s = substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 4)
      gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s)
      gsub(/&apos;/, "\047", s); gsub(/&amp;/, "\\&", s)
      return s
    }
    function add(name) {
      if (!(name in runs)) { order[++n] = name; runs[name] = 0; fails[name] = 0; skips[name] = 0 }
    }
    BEGIN {
      k = split(rounds, r, " ")
      for (i = 1; i <= k; i++) {
        split("", failed)
        file = out "/" r[i] ".failed"
        while ((getline line < file) > 0) {
          failed[line] = 1
          if (line ~ /^\(ctest round /) { add(line); runs[line]++; fails[line]++ }
        }
        close(file)
        file = out "/" r[i] ".xml"
        while ((getline line < file) > 0) {
          if (line !~ /^[ \t]*<testcase /) continue
          name = attr(line, "name"); status = attr(line, "status")
          add(name)
          if (name in failed) { runs[name]++; fails[name]++ }
          else if (status == "notrun") skips[name]++
          else runs[name]++
        }
        close(file)
      }
      for (i = 1; i <= n; i++) printf "%d\t%d\t%d\t%s\n", fails[order[i]], runs[order[i]], skips[order[i]], order[i]
    }'
}

rows=$(tally "${ROUNDS[@]}" | sort -t "$(printf '\t')" -k1,1nr -k4,4)
{
  printf '%-80s %5s %9s %8s\n' test runs failures skipped
  while IFS=$'\t' read -r f r s name; do
    [[ -n "$name" ]] || continue
    printf '%-80s %5d %9d %8d\n' "$name" "$r" "$f" "$s"
  done <<<"$rows"
} | tee "$OUT/table.txt"

total_failures=$(awk -F '\t' '{s += $1} END {print s + 0}' <<<"$rows")
echo "== $REPEATS rounds of $LABELS, then label soak once$([[ "$HOG" == 1 ]] && echo ', beside stress-ng --cpu 2'):" \
  "$total_failures failed run(s); records in $OUT"
[[ "$total_failures" -eq 0 ]]
