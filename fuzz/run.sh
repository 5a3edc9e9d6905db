#!/usr/bin/env bash
# Builds the libFuzzer targets into build-fuzz/ (clang++-14, -DEXIR_FUZZ=ON),
# makes their seed corpora, and runs each target for SECONDS (default 20), one
# after another. Exits non-zero if any target found something (a crash, a
# sanitizer report, an exception other than exir::Error, a timeout over 10 s or
# more than 2 GB of memory). See fuzz/README.md.
#
#   fuzz/run.sh [SECONDS] [TARGET...]      e.g. fuzz/run.sh 600 FuzzPte
#
# Environment: EXIR_TOOLS = directory holding exir-edge, exir-partition,
# exir-plan and exir-emit for the stage-artifact and .pte seeds (default
# build/bin; built into build-fuzz/tools when missing); CXX = the clang.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
all_targets=(FuzzExportJson FuzzProgramJson FuzzPt2 FuzzPickle FuzzEdgeYaml FuzzRewriteRules FuzzPte)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
declare -A max_len=([FuzzExportJson]=65536 [FuzzProgramJson]=65536 [FuzzPt2]=262144 [FuzzPickle]=16384
                    [FuzzEdgeYaml]=8192 [FuzzRewriteRules]=16384 [FuzzPte]=262144)
jobs=${JOBS:-2}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

out=build-fuzz
cmake -S . -B "$out" -DEXIR_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="${CXX:-clang++-14}" "${launcher[@]}" >/dev/null
cmake --build "$out" --target exir-fuzz -j "$jobs"

# Seeds: the tools make stage artifacts and .pte files from the seed models.
tools=${EXIR_TOOLS:-build/bin}
if [ ! -x "$tools/exir-edge" ] || [ ! -x "$tools/exir-emit" ]; then
  tools=$out/tools/bin
  cmake -S . -B "$out/tools" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
  cmake --build "$out/tools" -j "$jobs" --target exir-edge exir-partition exir-plan exir-emit
fi
rm -rf "$out/seeds"
python3 fuzz/make_seeds.py --out "$out/seeds" --tools "$tools"

status=0
summary=()
for t in "${targets[@]}"; do
  corpus=$out/corpus/$t crashes=$out/crashes/$t log=$out/logs/$t.log
  mkdir -p "$corpus" "$crashes" "$out/logs"
  echo "fuzz: $t for ${seconds}s (corpus $corpus, log $log)" >&2
  rc=0 start=$SECONDS
  "$out/bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="${max_len[$t]}" \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" "$out/seeds/$t" >"$log" 2>&1 || rc=$?
  took=$((SECONDS - start))
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    status=1
    summary+=("$t: FAILED (exit $rc) after ${runs:-?} runs in ${took}s, $cov; see $log and $crashes/")
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|terminate called|.*what\(\))' "$log" | head -5 >&2 || true
  else
    summary+=("$t: ok, ${runs:-?} runs in ${took}s, $cov")
  fi
done
printf 'fuzz: %s\n' "${summary[@]}" >&2
exit $status
