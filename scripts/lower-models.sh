#!/usr/bin/env bash
# The main job: build the tools, lower every bundled seed model to a .pte
# (edge -> plan -> emit, via scripts/lower-models.mk), and print a summary.
# Usage: scripts/lower-models.sh [out-dir]   (default: out)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out}
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target exir-edge exir-partition exir-plan exir-emit exir-inspect >/dev/null
make -s -f scripts/lower-models.mk BIN=build/bin OUT="$out" -j"$(nproc)"
echo
printf '%-28s %10s %8s %12s %14s\n' "model" ".pte bytes" "methods" "instructions" "planned bytes"
for pte in "$out"/*.pte; do
  name=$(basename "$pte" .pte)
  build/bin/exir-inspect --json "$pte" | python3 -c '
import json, sys
p = json.load(sys.stdin)
plans = p.get("execution_plan", [])
instrs = sum(len(c.get("instructions", [])) for pl in plans for c in pl.get("chains", []))
planned = sum(sum(pl.get("non_const_buffer_sizes", [])) for pl in plans)
print(len(plans), instrs, planned)' | {
    read -r methods instrs planned
    printf '%-28s %10s %8s %12s %14s\n' "$name" "$(stat -c %s "$pte")" "$methods" "$instrs" "$planned"
  }
done
