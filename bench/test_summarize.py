#!/usr/bin/env python3
"""bench/run's summary on made-up figures whose exponents are known: the fit,
the instruction exponent only where every run counted instructions, and the
plan figures; and its machine probe's figures and line (ctest bench.summarize)."""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import resource
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
loader = importlib.machinery.SourceFileLoader("bench_run", os.path.join(HERE, "run"))
spec = importlib.util.spec_from_loader("bench_run", loader)
bench = importlib.util.module_from_spec(spec)
loader.exec_module(bench)

failures = []


def check(what, got, want, tol=1e-9):
    if abs(got - want) > tol:
        failures.append("%s: got %r, expected %r" % (what, got, want))


def stages(nodes, instructions=True):
    out = {}
    for k, stage in enumerate(bench.STAGES):
        s = {"cpu_s": 1e-6 * nodes ** 2,                  # quadratic
             "user_s": 3e-7 * nodes ** 1.5,
             "peak_rss_bytes": 4096 * nodes}               # linear
        if instructions:
            s["instructions"] = 1000 * (k + 1) * nodes     # linear, scale per stage
        out[stage] = s
    return out


def plan(best, greedy, bound=100):
    # The other algorithms plan 1.2x the bound; only best and greedy are read.
    report = {a: {"planned_bytes": 120, "ratio": 1.2} for a in bench.ALGORITHMS}
    report["best"] = {"planned_bytes": best, "ratio": best / bound}
    report["greedy"] = {"planned_bytes": greedy, "ratio": greedy / bound}
    return report


results = {
    "mlp-1k": {"nodes": 1000, "stages": stages(1000), "plan": plan(100, 110)},
    "mlp-2k": {"nodes": 2000, "stages": stages(2000), "plan": plan(103, 102)},
    "mlp-8k": {"nodes": 8000, "stages": stages(8000)},
    # One llama run lacks instruction counts: no instruction exponent there.
    "llama-1k": {"nodes": 1000, "stages": stages(1000)},
    "llama-4k": {"nodes": 4000, "stages": stages(4000, instructions=False)},
    # A lone model of a family, and a name that is not family-size: no exponents.
    "convnet-1k": {"nodes": 1000, "stages": stages(1000)},
    "llama32": {"nodes": 5000, "stages": stages(5000)},
}

with contextlib.redirect_stdout(io.StringIO()) as printed:
    summary = bench.summarize(results)

exponents = summary["exponents"]
want_keys = {"%s/%s" % (f, s) for f in ("mlp", "llama") for s in bench.STAGES}
if set(exponents) != want_keys:
    failures.append("exponent keys: %s" % sorted(exponents))
for stage in bench.STAGES:
    mlp = exponents.get("mlp/" + stage, {})
    check("mlp/%s cpu" % stage, mlp.get("cpu", -1), 2.0)
    check("mlp/%s user" % stage, mlp.get("user", -1), 1.5)
    check("mlp/%s memory" % stage, mlp.get("memory", -1), 1.0)
    check("mlp/%s instructions" % stage, mlp.get("instructions", -1), 1.0)
    llama = exponents.get("llama/" + stage, {})
    check("llama/%s cpu" % stage, llama.get("cpu", -1), 2.0)
    if "instructions" in llama:
        failures.append("llama/%s: instruction exponent from a run without counts" % stage)
if "instructions 1.00" not in printed.getvalue():
    failures.append("the exponent lines do not print the instruction exponent")

check("plan best median", summary["plan"]["best"]["median"], 1.015)
check("plan greedy max", summary["plan"]["greedy"]["max"], 1.10)
if summary["plan"]["best_worse_than_greedy"] != ["mlp-2k"]:
    failures.append("best worse than greedy: %r" % summary["plan"]["best_worse_than_greedy"])

check("fit of a constant", bench.fit_exponent([1, 2, 4], [5, 5, 5]), 0.0)
check("fit of one size", bench.fit_exponent([3, 3], [1, 9]), 0.0)

# The machine probe (run apart, as bench/run runs it): every figure there and
# positive (no timing is judged), and this process's peak RSS not raised.
peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
probe = bench.machine_probe_apart(settle_s=0, mb=64, sha_mb=8)
if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > peak_before + 16 * 1024:
    failures.append("the probe raised the peak RSS of bench/run's process")
if set(probe) != {"sha256_mb_per_s", "first_touch_gb_per_s", "reused_touch_gb_per_s"}:
    failures.append("probe keys: %s" % sorted(probe))
elif min(probe.values()) <= 0:
    failures.append("probe figures not positive: %r" % probe)
line = bench.describe_probe({"sha256_mb_per_s": 900, "first_touch_gb_per_s": 0.5, "reused_touch_gb_per_s": 17.31},
                            "at start")
if line != "machine at start: SHA-256 900 MB/s; fresh memory 0.50 GB/s at first touch, 17.3 GB/s reused":
    failures.append("probe line: %r" % line)

for f in failures:
    print("bench.summarize: " + f, file=sys.stderr)
sys.exit(1 if failures else 0)
