# dynamic_programs.py NAME OUT.json - small torch.export programs (schema 8.14,
# the form gen_seed_models.py writes) with symbolic ints and list outputs.
#   symint: x f32[s0, 4], s0 in [1, 8]; relu; n = sym_size(relu, 0);
#           m = n * 4; an assert on n >= 1; view(relu, [m]); neg
#   split:  split_with_sizes_copy(x f32[6, 4], [2, 4]) and unbind_copy(y f32[2, 3])
#           (the _copy ops: exir-edge decomposes split/unbind into slices)
import json
import sys

FLOAT32 = 7


def sym(expr):
    return {"as_expr": {"expr_str": expr, "hint": None}}


S0 = "Symbol('s0', integer=True, positive=True)"
S0_TIMES_4 = "Mul(Integer(4), Symbol('s0', integer=True, positive=True))"


def meta(sizes):
    """Contiguous f32 metadata; only the leading dim may be symbolic."""
    dims = [{"as_int": s} if isinstance(s, int) else sym(s) for s in sizes]
    strides, run = [], 1
    for s in reversed(sizes[1:]):
        strides.insert(0, {"as_int": run})
        run *= s
    if sizes:
        strides.insert(0, {"as_int": run})
    return {"dtype": FLOAT32, "sizes": dims, "requires_grad": False, "device": {"type": "cpu", "index": None},
            "strides": strides, "storage_offset": {"as_int": 0}, "layout": 7}


def t(name):
    return {"as_tensor": {"name": name}}


def node(target, inputs, outputs):
    return {"target": target, "inputs": [{"name": n, "arg": a, "kind": 1} for n, a in inputs],
            "outputs": outputs, "metadata": {}, "is_hop_single_tensor_return": None}


def leaf_spec(n):
    leaf = {"type": None, "context": None, "children_spec": []}
    return json.dumps([1, {"type": "builtins.tuple", "context": "null", "children_spec": [
        {"type": "builtins.tuple", "context": "null", "children_spec": [leaf] * n},
        {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])


def program(inputs, nodes, outputs, tensor_values, sym_ints=None, sym_bools=None, ranges=None):
    out_leaf = {"type": None, "context": None, "children_spec": []}
    out_spec = json.dumps([1, out_leaf]) if len(outputs) == 1 else json.dumps(
        [1, {"type": "builtins.tuple", "context": "null", "children_spec": [out_leaf] * len(outputs)}])
    return {
        "graph_module": {
            "graph": {"inputs": [t(n) for n in inputs], "outputs": [t(n) for n in outputs], "nodes": nodes,
                      "tensor_values": tensor_values, "sym_int_values": sym_ints or {},
                      "sym_bool_values": sym_bools or {}, "is_single_tensor_return": False,
                      "custom_obj_values": {}, "sym_float_values": {}},
            "signature": {"input_specs": [{"user_input": {"arg": t(n)}} for n in inputs],
                          "output_specs": [{"user_output": {"arg": t(n)}} for n in outputs]},
            "module_call_graph": [{"fqn": "", "signature": {
                "inputs": [], "outputs": [], "in_spec": leaf_spec(len(inputs)), "out_spec": out_spec,
                "forward_arg_names": inputs}}],
            "metadata": {}, "treespec_namedtuple_fields": {}},
        "opset_version": {"aten": 10}, "range_constraints": ranges or {},
        "schema_version": {"major": 8, "minor": 14}, "verifiers": ["TRAINING"], "torch_version": "2.9.0"}


def symint():
    nodes = [
        node("torch.ops.aten.relu.default", [("self", t("x"))], [t("relu")]),
        node("torch.ops.aten.sym_size.int", [("self", t("relu")), ("dim", {"as_int": 0})],
             [{"as_sym_int": {"as_name": "sym_size_int"}}]),
        node("_operator.ge", [("a", {"as_sym_int": {"as_name": "sym_size_int"}}), ("b", {"as_int": 1})],
             [{"as_sym_bool": {"as_name": "ge"}}]),
        node("torch.ops.aten._assert_scalar.default",
             [("self", {"as_sym_bool": {"as_name": "ge"}}),
              ("assert_msg", {"as_string": "Runtime assertion failed for expression s0 >= 1 on node 'ge'"})], []),
        node("_operator.mul", [("a", {"as_sym_int": {"as_name": "sym_size_int"}}), ("b", {"as_int": 4})],
             [{"as_sym_int": {"as_name": "mul"}}]),
        node("torch.ops.aten.view.default",
             [("self", t("relu")), ("size", {"as_sym_ints": [{"as_name": "mul"}]})], [t("view")]),
        node("torch.ops.aten.neg.default", [("self", t("view"))], [t("neg")]),
    ]
    tv = {"x": meta([S0, 4]), "relu": meta([S0, 4]), "view": meta([S0_TIMES_4]), "neg": meta([S0_TIMES_4])}
    return program(["x"], nodes, ["neg"], tv,
                   sym_ints={"sym_size_int": sym(S0), "mul": sym(S0_TIMES_4)},
                   sym_bools={"ge": sym("GreaterThan(Symbol('s0', integer=True, positive=True), Integer(1))")},
                   ranges={"s0": {"min_val": 1, "max_val": 8}})


def split():
    nodes = [
        node("torch.ops.aten.split_with_sizes_copy.default",
             [("self", t("x")), ("split_sizes", {"as_ints": [2, 4]})],
             [{"as_tensors": [{"name": "getitem"}, {"name": "getitem_1"}]}]),
        node("torch.ops.aten.neg.default", [("self", t("getitem_1"))], [t("neg")]),
        node("torch.ops.aten.unbind_copy.int", [("self", t("y"))],
             [{"as_tensors": [{"name": "getitem_2"}, {"name": "getitem_3"}]}]),
        node("torch.ops.aten.add.Tensor", [("self", t("getitem_2")), ("other", t("getitem_3"))], [t("add")]),
    ]
    tv = {"x": meta([6, 4]), "y": meta([2, 3]), "getitem": meta([2, 4]), "getitem_1": meta([4, 4]),
          "neg": meta([4, 4]), "getitem_2": meta([3]), "getitem_3": meta([3]), "add": meta([3])}
    return program(["x", "y"], nodes, ["getitem", "neg", "add"], tv)


PROGRAMS = {"symint": symint, "split": split}

if __name__ == "__main__":
    json.dump(PROGRAMS[sys.argv[1]](), open(sys.argv[2], "w"), indent=1)
