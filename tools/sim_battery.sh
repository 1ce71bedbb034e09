#!/bin/sh
# tools/sim_battery.sh BUILD_DIR [big] > OUT: builds tools/sim_battery.cc
# against BUILD_DIR's secmode_sim (a release build made from the tree to
# check) and prints the battery's output. To show that a change leaves the
# simulator's output bit for bit as it was, run it on a build of the commit
# before and one after, and compare the two outputs with cmp.
set -eu
build=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT INT TERM
g++ -std=c++20 -O2 -I"$root" "$root/tools/sim_battery.cc" -o "$bin" \
  "$build/sim/libsecmode_sim.a" "$build/rpc/libsecmode_rpc_window.a" \
  "$build/common/libsecmode_common.a" -lpthread -lcrypto
"$bin" "$@"
