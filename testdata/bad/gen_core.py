#!/usr/bin/env python3
"""Generates the inputs of core-*.cases (helper "core": overflow, limits, type
errors, one-line messages, inputs each stage must verify) by mutating the seed
models and the tools' outputs on them.

    python3 testdata/bad/gen_core.py --bin build/bin

Inputs too large to commit (a 10 MB target, a 50,000-level in_spec) are not
written here: `gen_core.py --stdout NAME` prints them, and the cases pipe that
into the tool.
"""
import argparse
import base64
import copy
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
LEAF = {"type": None, "context": None, "children_spec": []}


def load(name):
    with open(os.path.join(MODELS, name)) as f:
        return json.load(f)


def dump(obj, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f)


def export_mutant(fn, base="basic.json"):
    d = load(base)
    fn(d)
    return d


def set_sizes(values):
    def f(d):
        for meta in d["graph_module"]["graph"]["tensor_values"].values():
            meta["sizes"] = [{"as_int": v} for v in values]
            meta["strides"] = [{"as_int": 1} for _ in values]
    return f


def set_meta(field, value):
    def f(d):
        d["graph_module"]["graph"]["tensor_values"]["x"][field] = value
    return f


def set_spec(which, text):
    def f(d):
        d["graph_module"]["module_call_graph"][0]["signature"][which] = text
    return f


def set_target(target):
    def f(d):
        d["graph_module"]["graph"]["nodes"][0]["target"] = target
    return f


def spec(node):
    return json.dumps([1, node])


def deep_spec(depth):
    text = "[1, " + '{"type": "builtins.list", "context": "null", "children_spec": [' * depth
    return text + json.dumps(LEAF) + "]}" * depth + "]"


# Inputs printed by --stdout, piped by the cases into the tools.
def big_target():
    return json.dumps(export_mutant(set_target("torch.ops.aten." + "x" * 10_000_000)))


def deep_in_spec():
    return json.dumps(export_mutant(set_spec("in_spec", deep_spec(50_000))))


STDOUT = {"big-target": big_target, "deep-in-spec": deep_in_spec}


def export_inputs(out):
    e = os.path.join(out, "export-json")
    cases = {
        "size-2p62x4": set_sizes([2**62, 4]),
        "size-int64max": set_sizes([2**63 - 1]),
        "size-2p61x8": set_sizes([2**61, 8]),
        "size-negative": set_sizes([-4]),
        "stride-negative": set_meta("strides", [{"as_int": -3}, {"as_int": 1}]),
        "offset-negative": set_meta("storage_offset", {"as_int": -1}),
        "inspec-no-children": set_spec("in_spec", '[1, {"type": "builtins.tuple", "context": "null"}]'),
        "inspec-type-number": set_spec("in_spec", spec({"type": 5, "context": "null", "children_spec": []})),
        "inspec-not-json": set_spec("in_spec", '[1, {"type'),
        "inspec-context-number": set_spec("in_spec", spec({"type": "builtins.dict", "context": 7, "children_spec": []})),
        "inspec-children-object": set_spec("in_spec", spec({"type": "builtins.tuple", "context": "null", "children_spec": {}})),
        "inspec-child-number": set_spec("in_spec", spec({"type": "builtins.list", "context": "null", "children_spec": [3]})),
        "inspec-protocol-2": set_spec("in_spec", json.dumps([2, LEAF])),
        "inspec-not-array": set_spec("in_spec", json.dumps(LEAF)),
        "inspec-leaf-children": set_spec("in_spec", spec({"type": None, "context": None, "children_spec": [LEAF]})),
        "inspec-deep-201": set_spec("in_spec", deep_spec(201)),
        "outspec-dict-keys": set_spec("out_spec", spec({"type": "builtins.dict", "context": "[\"a\"]",
                                                        "children_spec": [LEAF, LEAF]})),
        "outspec-dict-context-bad": set_spec("out_spec", spec({"type": "builtins.dict", "context": "[",
                                                               "children_spec": []})),
        "outspec-empty-type": set_spec("out_spec", spec({"type": "", "context": "null", "children_spec": []})),
        "target-newline": set_target("torch.ops.aten.foo\nbar"),
        "target-escape": set_target("torch.ops.aten.\x1b[2Jfoo"),
        # A tensor's name also in sym_int_values: a value has one kind.
        "value-two-tables": lambda d: d["graph_module"]["graph"]["sym_int_values"].__setitem__(
            "x", {"as_expr": {"expr_str": "s0", "hint": {"as_int": 4}}}),
    }
    for name, fn in cases.items():
        dump(export_mutant(fn), os.path.join(e, f"core-{name}.json"))
    # An argument nested 600 string-to-argument maps deep: refused by the JSON
    # depth bound, and the long pointer is shortened so the message shows.
    # (Built as text: Python's json module itself recurses too deep for it.)
    arg = '{"as_string_to_argument": {"a": ' * 600 + '{"as_int": 1}' + "}}" * 600
    d = load("basic.json")
    d["graph_module"]["graph"]["nodes"][0]["inputs"].append({"name": "deep", "arg": "@ARG@", "kind": None})
    with open(os.path.join(e, "core-argument-deep.json"), "w") as f:
        f.write(json.dumps(d).replace('"@ARG@"', arg))


def run(bin_dir, *args):
    subprocess.run([os.path.join(bin_dir, args[0])] + list(args[1:]), check=True)


def program_inputs(out, bin_dir):
    """Edge and planned program JSON, made by the tools from the seeds, then mutated."""
    p = os.path.join(out, "program-json")
    os.makedirs(p, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # Bases written next to the mutants so relative weight paths resolve.
        basic_edge = os.path.join(p, "core-base-basic.edge.json")
        run(bin_dir, "exir-edge", os.path.join(MODELS, "basic.json"), "-o", basic_edge)
        conv_edge = os.path.join(tmp, "conv.edge.json")
        run(bin_dir, "exir-edge", os.path.join(MODELS, "simple_conv.pt2"), "-o", conv_edge)
        basic_plan = os.path.join(tmp, "basic.plan.json")
        run(bin_dir, "exir-plan", basic_edge, "-o", basic_plan)
        conv_plan = os.path.join(p, "core-base-conv.plan.json")
        run(bin_dir, "exir-plan", conv_edge, "-o", conv_plan)
        with open(basic_edge) as f:
            edge = json.load(f)
        with open(basic_plan) as f:
            plan = json.load(f)
        with open(conv_plan) as f:
            conv = json.load(f)
    os.remove(os.path.join(p, "core-base-basic.edge.json"))

    def method(d):
        return d["methods"]["forward"]

    def graph(d):
        return method(d)["graph_module"]["graph"]

    def sig(d):
        return method(d)["graph_module"]["module_call_graph"][0]["signature"]

    def mutate(base, name, fn):
        d = copy.deepcopy(base)
        fn(d)
        dump(d, os.path.join(p, f"core-{name}.json"))

    def sizes(values):
        def f(d):
            for meta in graph(d)["tensor_values"].values():
                meta["sizes"] = [{"as_int": v} for v in values]
                meta["strides"] = [{"as_int": 1} for _ in values]
        return f

    # Edge stage (exir-plan's and exir-partition's input).
    mutate(edge, "edge-size-2p62x4", sizes([2**62, 4]))
    mutate(edge, "edge-size-negative", sizes([-4]))
    mutate(edge, "edge-inspec-no-children",
           lambda d: sig(d).__setitem__("in_spec", '[1, {"type": "builtins.tuple", "context": "null"}]'))
    mutate(edge, "edge-value-two-tables",
           lambda d: graph(d)["sym_bool_values"].__setitem__("aten_add_tensor", {"as_bool": True}))
    mutate(edge, "edge-name-newline",
           lambda d: graph(d)["nodes"][0].__setitem__("target", "executorch.exir.dialects.edge.ops.aten.nope\nx"))

    # Planned stage (exir-emit's input).
    allocs = lambda d: d["memory_plans"]["forward"]["allocations"]
    mutate(plan, "plan-size-2p61x8", sizes([2**61, 8]))
    def size_2p32p2(d):
        # A consistent plan (arena big enough) for tensors the .pte cannot hold (int32 sizes).
        sizes([2**32 + 2])(d)
        step = 2**35
        for i, k in enumerate(("x", "y", "alloc")):
            allocs(d)[k] = [1, i * step]
        allocs(d)["aten_add_tensor"] = allocs(d)["alloc"]  # the out variant writes into alloc
        d["memory_plans"]["forward"]["buffer_sizes"] = [0, 3 * step]
    mutate(plan, "plan-size-2p32p2", size_2p32p2)
    mutate(plan, "plan-size-negative", sizes([-4]))
    mutate(plan, "plan-inspec-no-children",
           lambda d: sig(d).__setitem__("in_spec", '[1, {"type": "builtins.tuple", "context": "null"}]'))
    mutate(plan, "plan-inspec-context-number",
           lambda d: sig(d).__setitem__("in_spec", spec({"type": "builtins.dict", "context": 3, "children_spec": []})))
    mutate(plan, "plan-alignment-2p63", lambda d: d["memory_plans"]["forward"].__setitem__("alignment", 2**63))
    mutate(plan, "plan-alignment-3", lambda d: d["memory_plans"]["forward"].__setitem__("alignment", 3))

    # The seed's three tensors x, y, add: x and add live together at node 0.
    def overlap(d):
        for k in allocs(d):
            allocs(d)[k] = [1, 0]
    mutate(plan, "plan-overlap", overlap)

    def offset_2p63(d):
        k = next(iter(allocs(d)))
        allocs(d)[k] = [1, 2**63]
    mutate(plan, "plan-offset-2p63", offset_2p63)
    mutate(plan, "plan-arena-1-byte", lambda d: d["memory_plans"]["forward"].__setitem__("buffer_sizes", [0, 1]))

    # conv: 'alloc' is the out buffer of a node inside the graph; it must be planned.
    mutate(conv, "plan-alloc-missing", lambda d: allocs(d).pop("alloc"))
    mutate(plan, "plan-memid-99", lambda d: allocs(d).__setitem__(next(iter(allocs(d))), [99, 0]))
    mutate(plan, "plan-memid-0", lambda d: allocs(d).__setitem__(next(iter(allocs(d))), [0, 0]))

    # Constants of the conv seed: lengths and hashes are checked, not trusted.
    def const_one_byte(d):
        ref = d["constants"]["conv.weight"]["data"]
        ref.clear()
        ref.update({"inline": base64.b64encode(b"\x01").decode(), "length": 1})
    mutate(conv, "plan-const-1-byte", const_one_byte)

    def const_length_short(d):
        d["constants"]["conv.weight"]["data"]["length"] = 1
    mutate(conv, "plan-const-length-1", const_length_short)

    def const_sha_lie(d):
        # Two different inline constants that claim the same digest.
        w = d["constants"]["conv.bias"]
        w["data"] = {"inline": base64.b64encode(bytes(64)).decode(), "length": 64,
                     "sha256": "0" * 64}
    mutate(conv, "plan-const-sha256-wrong", const_sha_lie)

    def const_negative_size(d):
        d["constants"]["conv.bias"]["sizes"] = [-16]
    mutate(conv, "plan-const-size-negative", const_negative_size)

    def const_huge_size(d):
        d["constants"]["conv.bias"]["sizes"] = [2**62, 4]
        d["constants"]["conv.bias"]["strides"] = [4, 1]
    mutate(conv, "plan-const-size-2p62x4", const_huge_size)

    def const_broadcast(d):
        # 2^62 elements read from one float (stride 0): the dense copy would be 2^64 bytes.
        d["constants"]["conv.bias"]["sizes"] = [2**62]
        d["constants"]["conv.bias"]["strides"] = [0]
    mutate(conv, "plan-const-broadcast-2p63", const_broadcast)


def pte_inputs(out, bin_dir):
    """.pte files whose indices point outside their tables: the seed basic.json
    emitted, decoded with flatc, one index changed, encoded again."""
    d = os.path.join(out, "pte")
    os.makedirs(d, exist_ok=True)
    schema = os.path.join(HERE, "..", "..", "schema", "program.fbs")
    with tempfile.TemporaryDirectory() as tmp:
        run(bin_dir, "exir-edge", os.path.join(MODELS, "basic.json"), "-o", os.path.join(tmp, "e.json"))
        run(bin_dir, "exir-plan", os.path.join(tmp, "e.json"), "-o", os.path.join(tmp, "p.json"))
        run(bin_dir, "exir-emit", os.path.join(tmp, "p.json"), "-o", os.path.join(tmp, "basic.pte"))
        subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", tmp, schema, "--",
                        os.path.join(tmp, "basic.pte")], check=True)
        with open(os.path.join(tmp, "basic.json")) as f:
            base = json.load(f)

        def plan(p):
            return p["execution_plan"][0]

        def kernel(p):
            return plan(p)["chains"][0]["instructions"][0]["instr_args"]

        mutants = {
            "arg-99999": lambda p: kernel(p)["args"].__setitem__(0, 99999),
            "arg-negative": lambda p: kernel(p)["args"].__setitem__(1, -1),
            "op-index-7": lambda p: kernel(p).__setitem__("op_index", 7),
            "input-99999": lambda p: plan(p)["inputs"].__setitem__(0, 99999),
            "output-4": lambda p: plan(p)["outputs"].__setitem__(0, 4),
            "memory-id-9": lambda p: plan(p)["values"][0]["val"]["allocation_info"].__setitem__("memory_id", 9),
            "intlist-item": lambda p: plan(p)["values"].append({"val_type": "IntList", "val": {"items": [3, 12345]}}),
            "tensorlist-item": lambda p: plan(p)["values"].append({"val_type": "TensorList", "val": {"items": [0, 77]}}),
            "jump-past-end": lambda p: plan(p)["chains"][0]["instructions"].append(
                {"instr_args_type": "JumpFalseCall", "instr_args": {"cond_value_index": 3, "destination_instruction": 9}}),
            "free-99": lambda p: plan(p)["chains"][0]["instructions"].append(
                {"instr_args_type": "FreeCall", "instr_args": {"value_index": 99}}),
            "delegate-index-0": lambda p: plan(p)["chains"][0]["instructions"].append(
                {"instr_args_type": "DelegateCall", "instr_args": {"delegate_index": 0, "args": [0]}}),
        }
        for name, fn in mutants.items():
            p = copy.deepcopy(base)
            fn(p)
            src = os.path.join(tmp, f"core-{name}.json")
            with open(src, "w") as f:
                json.dump(p, f)
            subprocess.run(["flatc", "--binary", "-o", tmp, schema, src], check=True)
            os.replace(os.path.join(tmp, f"core-{name}.pte"), os.path.join(d, f"core-{name}.pte"))


def pickle_pt2(path, pkl):
    """A legacy torch.export zip whose state dict (a stored torch.save zip) holds `pkl` as data.pkl."""
    def member(name):  # fixed timestamps: the generated archives are reproducible
        return zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))

    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_STORED) as z:
        z.writestr(member("archive/data.pkl"), pkl)
        z.writestr(member("archive/version"), "3\n")
    ep = load("basic.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(member("serialized_exported_program.json"), json.dumps(ep))
        z.writestr(member("serialized_state_dict.pt"), inner.getvalue())


def pickle_inputs(out):
    d = os.path.join(out, "pt2")
    pickle_pt2(os.path.join(d, "core-pickle-self-list.pt2"), b"\x80\x02]q\x00h\x00a.")
    depth = 200_000
    pickle_pt2(os.path.join(d, "core-pickle-deep.pt2"), b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b".")
    # x0 = []; x(k+1) = [xk, xk]: 2^48 paths through 48 shared lists.
    pkl = b"\x80\x02]q\x000"
    for k in range(48):
        pkl += b"](h" + bytes([k]) + b"h" + bytes([k]) + b"eq" + bytes([k + 1]) + b"0"
    pickle_pt2(os.path.join(d, "core-pickle-shared.pt2"), pkl + b"h" + bytes([48]) + b".")
    # A dict that holds itself as a value: {'a': <itself>}.
    pickle_pt2(os.path.join(d, "core-pickle-self-dict.pt2"), b"\x80\x02}q\x00X\x01\x00\x00\x00ah\x00s.")
    # A storage of -1 elements, and one of 2^62 floats (bytes overflow).
    for name, n in (("core-pickle-storage-negative.pt2", -1), ("core-pickle-storage-2p62.pt2", 2**62)):
        numel = n.to_bytes(8, "little", signed=True)
        pkl = (b"\x80\x02}q\x00X\x01\x00\x00\x00w"
               b"ctorch._utils\n_rebuild_tensor_v2\n"
               b"((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu"
               b"\x8a\x08" + numel + b"tQK\x00K\x01\x85K\x01\x85\x89NtRs.")
        pickle_pt2(os.path.join(d, name), pkl)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="directory holding the exir-* tools (for the program JSON inputs)")
    ap.add_argument("--stdout", choices=sorted(STDOUT), help="print one large input to stdout")
    args = ap.parse_args()
    if args.stdout:
        sys.stdout.write(STDOUT[args.stdout]())
        return 0
    export_inputs(HERE)
    pickle_inputs(HERE)
    if args.bin:
        program_inputs(HERE, args.bin)
        pte_inputs(HERE, args.bin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
