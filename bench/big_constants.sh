#!/bin/sh
# Emit time and peak RSS (/usr/bin/time -v) for a model with 5 GiB of constants
# held in a sparse file (testdata/lit/emit/Inputs/big_constants.py): the plain
# .pte, and the --external-constants split into .pte + .ptd. Outputs are sparse
# too, so the run needs little disk; the tools still stream all 5 GiB.
#
# usage: bench/big_constants.sh [BUILD_DIR]   (default: build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

"$bin/exir-edge" "$here/../testdata/models/m_linear_clamp.pt2" -o "$work/m.edge.json"
"$bin/exir-plan" "$work/m.edge.json" -o "$work/m.plan.json"
python3 "$here/../testdata/lit/emit/Inputs/big_constants.py" make "$work/m.plan.json" "$work/big.plan.json" "$work/big.bin"

run() {
  label=$1
  shift
  /usr/bin/time -v "$@" 2>"$work/time.txt"
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
  echo "$label: wall $wall, peak RSS $((rss / 1024)) MB"
}
for i in 1 2; do run "emit .pte (5 GiB constants), run $i" "$bin/exir-emit" "$work/big.plan.json" -o "$work/big.pte"
ls -ls "$work/big.pte" | awk '{print "  big.pte: " $6 " bytes, " $1 " KiB allocated"}'; done
run "emit .pte + .ptd split" "$bin/exir-emit" "$work/big.plan.json" -o "$work/split.pte" --external-constants
ls -ls "$work/split.pte" "$work/split.ptd" | awk '{print "  " $10 ": " $6 " bytes, " $1 " KiB allocated"}'
