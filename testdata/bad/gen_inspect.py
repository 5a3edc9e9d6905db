#!/usr/bin/env python3
"""Writes the malformed .bpte inputs of inspect.cases into testdata/bad/bpte/
(needs flatc; run from the repository root):

  inspect-truncated.bpte    a valid BundledProgram cut in half
  inspect-bad-program.bpte  verifies, but its embedded program is 64 zero bytes
  inspect-no-program.bpte   verifies, but has no program at all
"""
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "schema", "bundled_program.fbs")


def bpte(doc):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "x.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        subprocess.run(["flatc", "-b", "-o", tmp, SCHEMA, path], check=True)
        with open(os.path.join(tmp, "x.bpte"), "rb") as f:
            return f.read()


def main():
    suite = {"method_name": "forward",
             "test_cases": [{"inputs": [{"val_type": "Int", "val": {"int_val": 1}}],
                             "expected_outputs": [{"val_type": "Double", "val": {"double_val": 2.0}}]}]}
    bad_program = bpte({"version": 0, "method_test_suites": [suite], "program": [0] * 64})
    outputs = {
        "inspect-truncated.bpte": bad_program[: len(bad_program) // 2],
        "inspect-bad-program.bpte": bad_program,
        "inspect-no-program.bpte": bpte({"version": 0, "method_test_suites": [suite]}),
    }
    for name, data in outputs.items():
        with open(os.path.join(HERE, "bpte", name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
