#!/bin/sh
# Runs the memory placement benchmark: builds exir-plan-bench and prints, for
# each generated program (mlp, resnet, unet, llama with KV caches, a random
# DAG of 100k items) and each algorithm, the total bytes, the lower bound,
# their ratio, and wall/CPU time. Every placement is also checked by the
# verifier; the exit status is 1 if one is invalid or `best` is worse than
# greedy.
#
# usage: bench/plan_bench.sh [BUILD_DIR] [-- exir-plan-bench options]
#        (default BUILD_DIR: build; options: --case NAME --algorithm NAME
#         --svg DIR to also write SVG and Chrome-trace pictures of `best`)
#
# If the build tree does not define the target yet (bench/plan.cmake not
# included), the benchmark is compiled directly against the build's
# libExirPlan.a and its dependencies' archives.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
bench=$build/bin/exir-plan-bench
if cmake --build "$build" --target exir-plan-bench >/dev/null 2>&1; then
  :
else
  cmake --build "$build" --target ExirPlan >/dev/null
  mkdir -p "$build/bin"
  libs=""
  for component in Plan Ops IR Support; do
    lib=$(find "$build/lib/$component" -name "libExir$component.a" 2>/dev/null | head -n 1)
    [ -n "$lib" ] && libs="$libs $lib"
  done
  # ExirSupport replaces operator new with mimalloc's unless it was built
  # without it (sanitizer builds).
  extra=""
  if nm $libs 2>/dev/null | grep -q ' U mi_malloc$'; then extra=-lmimalloc; fi
  ${CXX:-c++} -std=c++20 -O2 -I"$here/../lib" -I"$build/generated" "$here/plan_bench.cpp" \
    $libs -lcrypto $extra -o "$bench"
fi
exec "$bench" "$@"
