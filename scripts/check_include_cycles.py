#!/usr/bin/env python3
"""Fails when files under lib/ depend on each other in a cycle.

A unit is a header with its source (lib/Partition/Partitioner.h + .cpp). Unit A
depends on unit B when A's header or source includes B's header. Prints each
cycle found as A -> B -> ... -> A and exits 1; exits 0 when there is none.

Usage: check_include_cycles.py LIB_DIR [COMPONENT...]
(with components, e.g. Partition: only cycles that pass through them)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def units(lib):
    deps = {}
    for root, _, files in os.walk(lib):
        for name in files:
            stem, ext = os.path.splitext(name)
            if ext not in (".h", ".cpp"):
                continue
            unit = os.path.relpath(os.path.join(root, stem), lib)
            with open(os.path.join(root, name), encoding="utf-8") as f:
                for inc in INCLUDE.findall(f.read()):
                    target = os.path.splitext(inc)[0]
                    if target != unit and os.path.exists(os.path.join(lib, inc)):
                        deps.setdefault(unit, set()).add(target)
            deps.setdefault(unit, set())
    return deps


def cycles(deps):
    found, state, stack = [], {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(deps.get(u, ())):
            if state.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(deps):
        if u not in state:
            visit(u)
    return found


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    found = cycles(units(sys.argv[1]))
    components = sys.argv[2:]
    if components:
        found = [c for c in found if any(u.split(os.sep)[0] in components for u in c)]
    for c in found:
        print("include cycle: " + " -> ".join(c))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
