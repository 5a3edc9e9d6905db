#!/usr/bin/env python3
"""bench/run --compare (ctest bench.compare): the old build is a folder of
wrappers that log each call and run BUILD's tools. Every stage must run
--repeat times with each build, on the same inputs, and the report and the
JSON must hold both builds' figures and the ratios.

usage: test_compare.py BUILD CACHE"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
STAGES = ("edge", "partition", "plan", "emit", "inspect")
REPEAT = 2


def thp_counted():
    """Whether this kernel counts transparent huge page faults (bench/run reports them then)."""
    try:
        with open("/proc/vmstat") as f:
            return any(line.startswith("thp_fault_alloc ") for line in f)
    except OSError:
        return False


THP_COUNTED = thp_counted()


def main(build, cache):
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "calls.log")
        os.makedirs(os.path.join(tmp, "old", "bin"))
        for stage in STAGES:
            wrapper = os.path.join(tmp, "old", "bin", "exir-" + stage)
            with open(wrapper, "w") as f:
                f.write('#!/bin/sh\necho "%s $*" >> %s\nexec %s "$@"\n' % (
                    stage, log, os.path.join(os.path.abspath(build), "bin", "exir-" + stage)))
            os.chmod(wrapper, 0o755)
        out_json = os.path.join(tmp, "compare.json")
        proc = subprocess.run([sys.executable, os.path.join(HERE, "run"), "--build", build, "--compare",
                               os.path.join(tmp, "old"), "--suite", "mlp-2k", "--repeat", str(REPEAT),
                               "--cache", cache, "--json", out_json], capture_output=True, text=True)
        print(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            return ["bench/run --compare exited %d" % proc.returncode]
        calls = [line.split() for line in open(log)] if os.path.exists(log) else []
        data = json.load(open(out_json))["compare"]["mlp-2k"]
        for stage in STAGES:
            mine = [c for c in calls if c[0] == stage]
            if len(mine) != REPEAT:
                failures.append("%s: the old build ran %d times, expected %d" % (stage, len(mine), REPEAT))
            # Inputs (the first path argument) are the files the new build wrote, not the old one's outputs.
            if any(".old." in c[1] for c in mine):
                failures.append("%s: the old build read its own output: %s" % (stage, mine))
            entry = data["stages"].get(stage, {})
            for build_name in ("old", "new"):
                fig = entry.get(build_name, {})
                if not (fig.get("wall_s", 0) > 0 and fig.get("peak_rss_bytes", 0) > 0 and
                        len(fig.get("walls_s", [])) == REPEAT):
                    failures.append("%s: %s figures missing or empty: %s" % (stage, build_name, fig))
                # Memory faulted in as huge pages: a count of bytes where the kernel keeps one.
                faulted = fig.get("huge_page_fault_bytes", "missing")
                if faulted == "missing" or (THP_COUNTED and not (isinstance(faulted, (int, float)) and faulted >= 0)):
                    failures.append("%s: %s huge-page faults %r" % (stage, build_name, faulted))
            if THP_COUNTED and not any(line.split()[:1] == [stage] and "faulted" in line
                                       for line in proc.stdout.splitlines()):
                failures.append("%s: no faulted figure in the report" % stage)
            ratio, spread = entry.get("new_over_old_wall", 0), entry.get("new_over_old_wall_range", [0, 0])
            if not (ratio > 0 and spread[0] <= ratio <= spread[1]):
                failures.append("%s: new/old ratio %r outside its rounds' range %r" % (stage, ratio, spread))
            if not any(line.split()[:1] == [stage] and "new/old" in line for line in proc.stdout.splitlines()):
                failures.append("%s: no report line" % stage)
        # A missing old build is a usage error naming the tool, before any work.
        proc = subprocess.run([sys.executable, os.path.join(HERE, "run"), "--build", build, "--compare",
                               os.path.join(tmp, "nowhere"), "--suite", "mlp-2k"], capture_output=True, text=True)
        if proc.returncode == 0 or "nowhere/bin/exir-edge is missing" not in proc.stderr:
            failures.append("missing old build: exit %d, %r" % (proc.returncode, proc.stderr))
        # Modes it does not combine with are usage errors (exit 2).
        proc = subprocess.run([sys.executable, os.path.join(HERE, "run"), "--build", build, "--compare", build,
                               "--scaling"], capture_output=True, text=True)
        if proc.returncode != 2 or "does not combine" not in proc.stderr:
            failures.append("--compare --scaling: exit %d, %r" % (proc.returncode, proc.stderr))
    return failures


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    problems = main(sys.argv[1], sys.argv[2])
    for p in problems:
        print("FAIL: " + p)
    sys.exit(1 if problems else 0)
