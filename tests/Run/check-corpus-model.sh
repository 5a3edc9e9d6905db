#!/bin/sh
# Lowers ../shared/corpus/torch-export/NAME.pt2 to a .pte and runs it on the
# recorded inputs, expecting the outputs eager PyTorch computed
# (max abs error <= 1e-4 * max(1, max |expected|), the corpus README's bound).
#   check-corpus-model.sh BIN OUT NAME
set -eu
BIN=$1 OUT=$2 NAME=$3
CORPUS=../shared/corpus/torch-export
mkdir -p "$OUT"
"$BIN/exir-edge" "$CORPUS/$NAME.pt2" | "$BIN/exir-plan" - | "$BIN/exir-emit" - -o "$OUT/$NAME.pte"
set --
k=0
while [ -f "$CORPUS/$NAME.in$k.npy" ]; do set -- "$@" --input "$k=$CORPUS/$NAME.in$k.npy"; k=$((k + 1)); done
k=0
while [ -f "$CORPUS/$NAME.out$k.npy" ]; do set -- "$@" --expect "$k=$CORPUS/$NAME.out$k.npy"; k=$((k + 1)); done
"$BIN/exir-run" "$OUT/$NAME.pte" "$@" --atol 1e-4 --rtol 0 --atol-scaled --output-dir "$OUT/$NAME.outputs"
echo "$NAME: the .pte reproduces $k outputs of eager PyTorch"
