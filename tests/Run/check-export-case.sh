#!/bin/sh
# Lowers DIR/NAME.pt2 (a real torch.export program) to a .pte and runs it on
# DIR/NAME.inK.npy, expecting DIR/NAME.outK.npy, the outputs eager PyTorch computed
# (max abs error <= 1e-4 * max(1, max |expected|)).
#   check-export-case.sh BIN OUT DIR NAME [unsupported]
# With `unsupported` (cases listed in DIR/unsupported.txt), lowering may instead
# refuse the program, but only cleanly: exit status 1 and a one-line
# "tool: error: ..." message. A crash, an internal error or wrong numbers fail.
set -u
BIN=$1 OUT=$2 DIR=$3 NAME=$4 MODE=${5:-}
mkdir -p "$OUT"
err="$OUT/$NAME.lower.err"
"$BIN/exir-edge" "$DIR/$NAME.pt2" -o "$OUT/$NAME.edge.json" 2>"$err" &&
  "$BIN/exir-plan" "$OUT/$NAME.edge.json" -o "$OUT/$NAME.plan.json" 2>>"$err" &&
  "$BIN/exir-emit" "$OUT/$NAME.plan.json" -o "$OUT/$NAME.pte" 2>>"$err"
status=$?
if [ $status -ne 0 ]; then
  cat "$err"
  if [ "$MODE" = unsupported ] && [ $status -eq 1 ] && [ "$(grep -c . "$err")" -eq 1 ] && grep -q ': error: ' "$err"; then
    echo "$NAME: not supported yet, refused cleanly (listed in $DIR/unsupported.txt)"
    exit 0
  fi
  echo "$NAME: lowering failed (exit $status)"
  exit 1
fi
set --
k=0
while [ -f "$DIR/$NAME.in$k.npy" ]; do set -- "$@" --input "$k=$DIR/$NAME.in$k.npy"; k=$((k + 1)); done
k=0
while [ -f "$DIR/$NAME.out$k.npy" ]; do set -- "$@" --expect "$k=$DIR/$NAME.out$k.npy"; k=$((k + 1)); done
"$BIN/exir-run" "$OUT/$NAME.pte" "$@" --atol 1e-4 --rtol 0 --atol-scaled --output-dir "$OUT/$NAME.outputs" || exit 1
echo "$NAME: the .pte reproduces $k outputs of eager PyTorch"
if [ "$MODE" = unsupported ]; then echo "$NAME: now lowers and matches: remove it from $DIR/unsupported.txt"; fi
