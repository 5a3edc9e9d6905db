#!/usr/bin/env python3
"""Fails when a program JSON (stage artifact) holds a key schema/artifact.md does
not document.

usage: check_artifact_keys.py ARTIFACT.md FILE.json [FILE.json ...]

Every object key of every file is looked up in ARTIFACT.md, where a documented
key appears in backticks (`debug_handle`). The keys of objects that are maps
(method names, FQNs, value names, ...) are names, not fields, and are skipped;
their values are still walked. Prints one line per undocumented key (with the
first place it was seen) and exits 1 if there is any.
"""
import json
import re
import sys

# Objects whose keys are names chosen by the program, not fields of the format.
MAPS = {
    "methods", "constants", "delegates", "memory_plans", "allocations", "constant_methods",
    "named_data", "tensor_values", "sym_int_values", "sym_bool_values", "sym_float_values",
    "custom_obj_values", "range_constraints", "opset_version", "treespec_namedtuple_fields",
}


def walk(value, pointer, parent_key, found):
    if isinstance(value, dict):
        for key, child in value.items():
            if parent_key not in MAPS:
                found.setdefault(key, pointer + "/" + key)
            walk(child, pointer + "/" + key, key if parent_key not in MAPS else None, found)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            walk(child, pointer + "/" + str(i), None, found)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        documented = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", f.read()))
    missing = {}
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8") as f:
            found = {}
            walk(json.load(f), "", None, found)
        for key, pointer in found.items():
            if key not in documented and key not in missing:
                missing[key] = f"{path}: {pointer}"
    for key in sorted(missing):
        print(f"{sys.argv[1]} does not document key '{key}' (seen at {missing[key]})")
    print(f"{len(sys.argv) - 2} artifacts, {len(missing)} undocumented keys", file=sys.stderr)
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
