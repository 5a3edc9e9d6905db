#!/usr/bin/env python3
"""bench/run's summary on made-up figures whose exponents are known: the fit,
the instruction exponent only where every run counted instructions, and the
plan figures (ctest bench.summarize)."""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
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

for f in failures:
    print("bench.summarize: " + f, file=sys.stderr)
sys.exit(1 if failures else 0)
