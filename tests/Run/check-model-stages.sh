#!/bin/sh
# Lowers one seed model with scripts/lower-models.mk and checks with exir-run
# that its stages compute the same numbers on seeded random inputs.
#   check-model-stages.sh BIN OUT TARGET [METHOD...]
# TARGET is a lower-models.mk stem: "basic" compares basic.edge.json,
# basic.plan.json and basic.pte; "foo.delegated" / "composed" compare the
# delegated (.part.json), planned and .pte files (delegation itself changes
# numbers where a demo backend approximates, e.g. sin as x - x^3/6).
set -eu
BIN=$1 OUT=$2 TARGET=$3
shift 3
METHODS=${*:-forward}
mkdir -p "$OUT"
make -s -f scripts/lower-models.mk BIN="$BIN" OUT="$OUT" "$OUT/$TARGET.pte"
if [ -f "$OUT/$TARGET.part.json" ]; then FIRST=$OUT/$TARGET.part.json; else FIRST=$OUT/$TARGET.edge.json; fi
PLAN=$OUT/$TARGET.plan.json PTE=$OUT/$TARGET.pte
for method in $METHODS; do
  for seed in 0 1 2; do
    "$BIN/exir-run" "$FIRST" --method "$method" --seed "$seed" --compare "$PLAN" >/dev/null
    "$BIN/exir-run" "$PLAN" --method "$method" --seed "$seed" --compare "$PTE" >/dev/null
    "$BIN/exir-run" "$FIRST" --method "$method" --seed "$seed" --compare "$PTE" >/dev/null
  done
done
echo "$TARGET: $FIRST, $PLAN and $PTE agree (methods: $METHODS; seeds 0 1 2)"
