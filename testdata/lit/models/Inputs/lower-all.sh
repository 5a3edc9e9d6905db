# lower-all.sh MODEL.pt2 OUTDIR: every stage of MODEL into OUTDIR (for determinism.test).
set -eu
model=$1
out=$2
exir-edge "$model" -o "$out/m.edge.json"
exir-partition "$out/m.edge.json" --partitioner AddMulPartitionerDemo --blob-inline-limit 0 -o "$out/m.part.json"
exir-plan "$out/m.part.json" -o "$out/m.plan.json" --report-svg "$out/plan.svg" --trace "$out/plan.trace.json"
exir-emit "$out/m.plan.json" -o "$out/m.pte" --external-constants
exir-inspect "$out/m.pte" > "$out/m.txt"
