#!/usr/bin/env python3
"""Writes a synthetic N-node torch.export ExportedProgram JSON (schema 8.14).

The graph is a chain of conv1d-like, add, mul and relu nodes over [1, 64, 256]
float tensors, with the tensor_values, signature entries (conv parameters) and
node metadata (stack_trace, nn_module_stack, source_fn_stack) that
torch.export writes, serialized with json.dumps defaults exactly like torch.
About 650 bytes per node: 100k nodes is ~65 MB.

usage: gen_large_program.py N OUTPUT.json
"""
import json
import sys

SHAPE = [1, 64, 256]
STRIDES = [16384, 256, 1]


def tensor_meta(sizes, strides, requires_grad=False):
    return {"dtype": 7, "sizes": [{"as_int": s} for s in sizes], "requires_grad": requires_grad,
            "device": {"type": "cpu", "index": None}, "strides": [{"as_int": s} for s in strides],
            "storage_offset": {"as_int": 0}, "layout": 7}


def tensor(name):
    return {"as_tensor": {"name": name}}


def arg(name, value, kind=1):
    return {"name": name, "arg": value, "kind": kind}


def metadata(i, block, fn, line):
    return {"stack_trace": 'File "m.py", line %d, in forward\n    h = %s' % (line, line_text(fn)),
            "nn_module_stack": "L__self__,,model.Big;L__self___blocks_%d,blocks.%d,model.Block" % (block, block),
            "source_fn_stack": "%s,%s" % (fn, source(fn))}


def line_text(fn):
    return {"conv": "self.conv(h)", "add": "h + x", "mul": "h * 0.5", "relu": "torch.relu(h)"}[fn]


def source(fn):
    return {"conv": "torch.nn.modules.conv.Conv1d", "add": "_operator.add", "mul": "_operator.mul",
            "relu": "torch.relu"}[fn]


def build(n):
    inputs, input_specs, nodes = [], [], []
    tensor_values = {}
    params = []
    prev = "x"
    for i in range(n):
        block = i // 8
        kind = ("conv", "add", "relu", "mul", "add", "relu", "mul", "relu")[i % 8]
        name = "%s_%d" % (kind, i)
        if kind == "conv":
            w = "p_blocks_%d_conv_%d_weight" % (block, i)
            params.append((w, "blocks.%d.conv_%d.weight" % (block, i)))
            tensor_values[w] = tensor_meta([64, 64, 1], [64, 1, 1], True)
            node_inputs = [arg("input", tensor(prev)), arg("weight", tensor(w)), arg("bias", {"as_none": True}),
                           arg("stride", {"as_ints": [1]}), arg("padding", {"as_ints": [0]}),
                           arg("dilation", {"as_ints": [1]}), arg("transposed", {"as_bool": False}),
                           arg("output_padding", {"as_ints": [0]}), arg("groups", {"as_int": 1})]
            target = "torch.ops.aten.convolution.default"
        elif kind == "add":
            node_inputs = [arg("self", tensor(prev)), arg("other", tensor("x"))]
            target = "torch.ops.aten.add.Tensor"
        elif kind == "mul":
            node_inputs = [arg("self", tensor(prev)), arg("other", {"as_float": 0.5})]
            target = "torch.ops.aten.mul.Scalar"
        else:
            node_inputs = [arg("self", tensor(prev))]
            target = "torch.ops.aten.relu.default"
        nodes.append({"target": target, "inputs": node_inputs, "outputs": [tensor(name)],
                      "metadata": metadata(i, block, kind, 100 + i % 50), "is_hop_single_tensor_return": None})
        tensor_values[name] = tensor_meta(SHAPE, STRIDES)
        prev = name
    for placeholder, fqn in params:
        inputs.append(tensor(placeholder))
        input_specs.append({"parameter": {"arg": {"name": placeholder}, "parameter_name": fqn}})
    inputs.append(tensor("x"))
    input_specs.append({"user_input": {"arg": tensor("x")}})
    tensor_values["x"] = tensor_meta(SHAPE, STRIDES)
    leaf = {"type": None, "context": None, "children_spec": []}
    in_spec = json.dumps([1, {"type": "builtins.tuple", "context": "null", "children_spec": [
        {"type": "builtins.tuple", "context": "null", "children_spec": [leaf]},
        {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])
    return {"graph_module": {
        "graph": {"inputs": inputs, "outputs": [tensor(prev)], "nodes": nodes, "tensor_values": tensor_values,
                  "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": False,
                  "custom_obj_values": {}, "sym_float_values": {}},
        "signature": {"input_specs": input_specs, "output_specs": [{"user_output": {"arg": tensor(prev)}}]},
        "module_call_graph": [{"fqn": "", "signature": {"inputs": [], "outputs": [], "in_spec": in_spec,
                                                        "out_spec": json.dumps([1, leaf]),
                                                        "forward_arg_names": ["x"]}}],
        "metadata": {}, "treespec_namedtuple_fields": {}},
        "opset_version": {"aten": 10}, "range_constraints": {}, "schema_version": {"major": 8, "minor": 14},
        "verifiers": ["ATEN"], "torch_version": "2.9.0"}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    n = int(sys.argv[1])
    with open(sys.argv[2], "w") as f:
        f.write(json.dumps(build(n)))


if __name__ == "__main__":
    main()
