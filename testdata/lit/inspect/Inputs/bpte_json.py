"""Writes the JSON of a BundledProgram (schema/bundled_program.fbs) around a .pte,
for `flatc -b` to turn into a .bpte: a "forward" suite with two test cases of
f32[2, 2] tensors (plus an int, a bool and a double input in the first), and a
suite for a method the program does not have.

usage: bpte_json.py PROGRAM.pte OUT.json
"""
import json
import struct
import sys


def tensor(values):
    return {"val_type": "Tensor",
            "val": {"scalar_type": "FLOAT", "sizes": [2, 2],
                    "data": list(struct.pack("<4f", *values)), "dim_order": [0, 1]}}


def main():
    pte_path, out_path = sys.argv[1:3]
    with open(pte_path, "rb") as f:
        program = list(f.read())
    first = {"inputs": [tensor([1, 2, 3, 4]), {"val_type": "Int", "val": {"int_val": 7}},
                        {"val_type": "Bool", "val": {"bool_val": True}},
                        {"val_type": "Double", "val": {"double_val": 0.5}}],
             "expected_outputs": [tensor([5, 6, 7, 8])]}
    second = {"inputs": [tensor([0, 0, 0, 0])], "expected_outputs": [tensor([0, 0, 0, 0])]}
    doc = {"version": 1,
           "method_test_suites": [{"method_name": "forward", "test_cases": [first, second]},
                                  {"method_name": "encode", "test_cases": []}],
           "program": program}
    with open(out_path, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
