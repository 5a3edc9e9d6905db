#!/bin/sh
# Times reading and writing a synthetic 100k-node torch.export JSON (override
# with NODES=...), with our simdjson-based reader/writer and, for comparison, a
# plain nlohmann::json DOM parse + dump; prints peak RSS of each (/usr/bin/time -v).
#
# usage: bench/json_bench.sh [BUILD_DIR]   (default: build; builds exir-json-bench)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
nodes=${NODES:-100000}
bench=$build/bin/exir-json-bench
cmake --build "$build" --target exir-json-bench >/dev/null || test -x "$bench"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

python3 "$here/gen_large_program.py" "$nodes" "$work/program.json"
size=$(wc -c <"$work/program.json")
echo "input: $nodes nodes, $size bytes"

run() {
  /usr/bin/time -v "$@" 2>"$work/time.txt"
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
  echo "         peak RSS $((rss / 1024)) MB"
}
# Three runs each: the first also pays for cold caches; compare the later ones.
for i in 1 2 3; do run "$bench" "$work/program.json" "$work/written.json"; done
# Our output of torch's output must be byte-identical (same form, same floats).
if cmp -s "$work/program.json" "$work/written.json"; then
  echo "         output is byte-identical to the input"
else
  echo "         output DIFFERS from the input"
fi
for i in 1 2 3; do run "$bench" --nlohmann "$work/program.json"; done
