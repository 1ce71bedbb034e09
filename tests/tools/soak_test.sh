#!/usr/bin/env bash
# tools/soak.sh against a ctest project of its own (soak_fake/): a test
# failing on every second run is counted as failing half its runs, a skip
# as a skip, a test that cannot start as a failure, label soak once and
# never in the repeated rounds, a round of no test as a failure, the exit
# status 1; with HOG (stress-ng installed) the hog is gone when the script
# ends and when it is interrupted.
#   soak_test.sh SOURCE_DIR [hog]
set -euo pipefail
SRC=$1
MODE=${2:-count}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/secmode-soak-test-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake -S "$SRC/tests/tools/soak_fake" -B "$WORK/build" >/dev/null

# The row of test $1 in the table: "runs failures skipped".
row() { awk -v t="$1" '{ n = NF; name = $1; for (i = 2; i <= n - 3; i++) name = name " " $i
                         if (name == t) print $(n - 2), $(n - 1), $n }' "$WORK/out.txt"; }

if [[ "$MODE" == count ]]; then
  rc=0
  BUILD="$WORK/build" SOAK_REPEATS=4 SOAK_LABELS='^interop$' SOAK_JOBS=1 \
    bash "$SRC/tools/soak.sh" >"$WORK/out.txt" 2>&1 || rc=$?
  cat "$WORK/out.txt"
  [[ $rc -eq 1 ]] || fail "exit status $rc, not 1"
  [[ "$(row flaky)" == "4 2 0" ]] || fail "flaky: '$(row flaky)', not '4 2 0'"
  [[ "$(row 'steady.Test/0 & <more>')" == "4 0 0" ]] || fail "steady: '$(row 'steady.Test/0 & <more>')'"
  [[ "$(row skipped)" == "0 0 4" ]] || fail "skipped: '$(row skipped)', not '0 0 4'"
  [[ "$(row cannot_start)" == "4 4 0" ]] || fail "cannot_start: '$(row cannot_start)', not '4 4 0'"
  [[ "$(row soaked_once)" == "1 0 0" ]] || fail "soaked_once: '$(row soaked_once)', not '1 0 0'"
  [[ "$(wc -l <"$WORK/build/soaked.count")" -eq 1 ]] || fail "the soak label ran more than once"
  [[ -z "$(row never_repeated)" ]] || fail "a test outside the labels ran"
  # Every test passing: exit 0, the table with each.
  BUILD="$WORK/build" SOAK_REPEATS=2 SOAK_LABELS='^calm$' SOAK_JOBS=1 bash "$SRC/tools/soak.sh" \
    >"$WORK/out.txt" 2>&1 || fail "exit status $? with every test passing: $(cat "$WORK/out.txt")"
  [[ "$(row never_repeated)" == "2 0 0" ]] || fail "never_repeated: '$(row never_repeated)', not '2 0 0'"
  BUILD="$WORK/build" SOAK_REPEATS=0 bash "$SRC/tools/soak.sh" >/dev/null 2>&1 && fail "SOAK_REPEATS=0 accepted"
  # Labels that select nothing: a failure, not an empty success.
  BUILD="$WORK/build" SOAK_REPEATS=1 SOAK_LABELS='^no-such-label$' bash "$SRC/tools/soak.sh" \
    >"$WORK/out.txt" 2>&1 && fail "a soak of no test passed"
  grep -q "(ctest round repeat-1, exit" "$WORK/out.txt" || fail "no row for the empty round: $(cat "$WORK/out.txt")"
  echo "soak counting: ok"
  exit 0
fi

# hog: a stress-ng started by the script is gone after it, on a normal end
# and on SIGINT.
command -v stress-ng >/dev/null || { echo "stress-ng is not installed: skipped"; exit 77; }
hog_of() { sed -n 's/.*stress-ng --cpu 2 (pid \([0-9]*\)).*/\1/p' "$1"; }
BUILD="$WORK/build" SOAK_REPEATS=1 SOAK_LABELS='^unit$' SOAK_HOG=1 bash "$SRC/tools/soak.sh" \
  >"$WORK/hog1.txt" 2>&1 || true
pid=$(hog_of "$WORK/hog1.txt")
[[ -n "$pid" ]] || fail "no hog started: $(cat "$WORK/hog1.txt")"
! kill -0 "$pid" 2>/dev/null || fail "stress-ng $pid still runs after the script ended"
[[ -z "$(pgrep -g "$pid" 2>/dev/null)" ]] || fail "workers of stress-ng $pid still run"

# SIGINT while a test runs (label slow: sleep 60).
BUILD="$WORK/build" SOAK_REPEATS=1 SOAK_LABELS='^slow$' SOAK_HOG=1 \
  setsid bash "$SRC/tools/soak.sh" >"$WORK/hog2.txt" 2>&1 &
script=$!
for _ in $(seq 100); do
  pid=$(hog_of "$WORK/hog2.txt")
  [[ -n "$pid" ]] && grep -q "round repeat-1" "$WORK/hog2.txt" && break
  sleep 0.1
done
[[ -n "$pid" ]] || fail "no hog started: $(cat "$WORK/hog2.txt")"
sleep 0.5
kill -INT -- "-$script"
for _ in $(seq 100); do kill -0 "$script" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$script" 2>/dev/null || { kill -KILL -- "-$script"; fail "the script ran on after SIGINT"; }
! kill -0 "$pid" 2>/dev/null || fail "stress-ng $pid still runs after SIGINT"
[[ -z "$(pgrep -g "$pid" 2>/dev/null)" ]] || fail "workers of stress-ng $pid still run after SIGINT"
echo "soak hog: ok"
