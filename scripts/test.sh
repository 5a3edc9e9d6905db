#!/usr/bin/env bash
# Configure, build and run every test (Catch2 unit tests + lit golden tests) with CTest.
# Usage: scripts/test.sh [build-dir]                 (default: build)
#        scripts/test.sh --sanitize [build-dir]      (default: build-asan)
# --sanitize builds with AddressSanitizer + UndefinedBehaviorSanitizer and
# without mimalloc (-DEXIR_SANITIZE=ON) and runs the same tests; any report fails them.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=OFF
if [ "${1:-}" = "--sanitize" ]; then
  sanitize=ON
  shift
  build=${1:-build-asan}
else
  build=${1:-build}
fi
scripts/setup.sh
werror=OFF
if [ "${CI:-}" = "true" ]; then werror=ON; fi
if [ "$sanitize" = ON ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEXIR_SANITIZE=ON -DEXIR_WERROR=$werror >/dev/null
  # A failed allocation throws std::bad_alloc as with mimalloc (the tools' "out of
  # memory" path) instead of ASan's report; every other finding stops the test.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1:abort_on_error=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  timeout=(--timeout 3000)
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DEXIR_WERROR=$werror >/dev/null
  timeout=()
fi
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "${timeout[@]}"
