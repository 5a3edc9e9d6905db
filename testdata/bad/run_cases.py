#!/usr/bin/env python3
"""Runs every malformed-input case in testdata/bad/*.cases against the tools.

A case is one line:  INPUT | COMMAND | EXIT | MESSAGE
  INPUT    a file under testdata/bad (or "-" when the command needs none)
  COMMAND  a shell command; {in} is the input's path, {out} a path in an empty
           scratch directory, {dir} that directory, {shared} ../shared,
           {testdata} the repository's testdata/ (for valid companion inputs)
  EXIT     the expected exit status (1 bad input, 2 usage)
  MESSAGE  text that stderr must contain (case-sensitive)
Lines starting with '#' and blank lines are ignored.

Each case must: exit with EXIT within the time bound; print exactly one line on
stderr for exit 1 (usage errors may print the usage too); contain MESSAGE; leave
the scratch directory as it found it (no output, no temporary, no sidecar), and
an output file that existed before unchanged; print no sanitizer report.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

SANITIZER_MARKS = ("AddressSanitizer", "UndefinedBehaviorSanitizer", "LeakSanitizer",
                   "runtime error:", "Sanitizer:")


def parse_cases(path):
    cases = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ")]
            if len(parts) != 4:
                raise SystemExit(f"{path}:{lineno}: expected 'INPUT | COMMAND | EXIT | MESSAGE'")
            inp, cmd, code, msg = parts
            cases.append((f"{os.path.basename(path)}:{lineno}", inp, cmd, int(code), msg))
    return cases


def snapshot(directory):
    state = {}
    for root, _, files in os.walk(directory):
        for name in files:
            p = os.path.join(root, name)
            with open(p, "rb") as f:
                state[os.path.relpath(p, directory)] = f.read()
    return state


def run_case(case, bad_dir, shared_dir, timeout):
    where, inp, cmd, code, msg = case
    scratch = tempfile.mkdtemp(prefix="exir-bad-")
    try:
        # An existing output file must survive a failing run unchanged.
        existing = os.path.join(scratch, "existing.out")
        with open(existing, "wb") as f:
            f.write(b"left alone\n")
        in_path = os.path.join(bad_dir, inp) if inp != "-" else "/dev/null"
        if inp != "-" and not os.path.lexists(in_path):
            return f"{where}: input {inp} does not exist"
        command = (cmd.replace("{in}", shlex_quote(in_path))
                   .replace("{out}", shlex_quote(os.path.join(scratch, "out")))
                   .replace("{existing}", shlex_quote(existing))
                   .replace("{dir}", shlex_quote(scratch))
                   .replace("{shared}", shlex_quote(shared_dir))
                   .replace("{testdata}", shlex_quote(os.path.dirname(bad_dir))))
        before = snapshot(scratch)
        try:
            proc = subprocess.run(["bash", "-c", command], cwd=scratch, capture_output=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"{where}: timed out after {timeout} s: {command}"
        err = proc.stderr.decode("utf-8", "replace")
        problems = []
        if proc.returncode != code:
            problems.append(f"exit {proc.returncode}, expected {code}")
        if msg not in err:
            problems.append(f"stderr lacks {msg!r}")
        if code == 1 and err.count("\n") != 1:
            problems.append(f"stderr has {err.count(chr(10))} lines, expected 1")
        if any(m in err for m in SANITIZER_MARKS):
            problems.append("sanitizer report")
        after = snapshot(scratch)
        if after != before:
            changed = sorted(set(after) ^ set(before) |
                             {k for k in after if k in before and after[k] != before[k]})
            problems.append(f"scratch directory changed: {changed}")
        if problems:
            return f"{where}: {'; '.join(problems)}\n    command: {command}\n    stderr: {err[:600]!r}"
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def shlex_quote(s):
    import shlex
    return shlex.quote(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory holding the exir-* tools")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("EXIR_BAD_TIMEOUT", "20")))
    ap.add_argument("--filter", default="", help="run only cases whose file:line or input contains this")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    bad_dir = os.path.dirname(os.path.abspath(__file__))
    os.environ["PATH"] = os.path.abspath(args.bin) + os.pathsep + os.environ["PATH"]
    os.environ.setdefault("LC_ALL", "C")
    cases = []
    for path in sorted(glob.glob(os.path.join(bad_dir, "*.cases"))):
        cases += parse_cases(path)
    cases = [c for c in cases if args.filter in c[0] or args.filter in c[1]]
    # "[no-sanitizer] COMMAND": a case ASan cannot run (ulimit -v; ASan's operator
    # new reports instead of throwing), skipped when the tools are sanitized.
    skipped = 0
    if os.environ.get("EXIR_SANITIZED"):
        skipped = sum(1 for c in cases if c[2].startswith("[no-sanitizer]"))
        cases = [c for c in cases if not c[2].startswith("[no-sanitizer]")]
    cases = [c[:2] + (c[2].removeprefix("[no-sanitizer]").lstrip(),) + c[3:] for c in cases]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=args.j) as pool:
        results = list(pool.map(lambda c: run_case(c, bad_dir, os.path.abspath(args.shared), args.timeout), cases))
    failures = [r for r in results if r]
    for r in failures:
        print("FAIL " + r)
    inputs = {c[1] for c in cases if c[1] != "-"}
    print(f"bad inputs: {len(cases) - len(failures)} of {len(cases)} cases pass ({len(inputs)} input files)"
          + (f", {skipped} skipped under sanitizers" if skipped else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
