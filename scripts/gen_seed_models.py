#!/usr/bin/env python3
# gen_seed_models.py - write the seed models as torch.export serializations.
#
# There is no PyTorch on the build machines, so the seed models of
# ../shared/spec/design.md section 5 are written here, by hand, in the exact form
# torch.export (torch 2.9.0, serialization schema 8.14) gives them: one
# `<name>.json` per model (the ExportedProgram JSON document, byte for byte what
# `models/model.json` holds inside a PT2 archive) and one `<name>.pt2` PT2
# archive per model (root folder = file stem, raw little-endian weights with a
# PayloadConfig, miniz-style STORED zip entries with 64-byte data alignment).
#
# Only the standard library is used. The output is deterministic: weights come
# from a seeded `random.Random`, zip entries carry no timestamps, and the
# archive's serialization id is derived from the archive content. Running the
# script twice gives identical bytes; `--check` verifies that the files on disk
# are exactly what the script would write.
#
# Usage:  python3 scripts/gen_seed_models.py [--out DIR] [--check]
#
# See testdata/models/README.md for where each model comes from and how the
# files differ from a real torch.export run.

import argparse
import hashlib
import json
import os
import random
import struct
import sys
import zlib

TORCH_VERSION = "2.9.0"
SCHEMA_VERSION = {"major": 8, "minor": 14}
OPSET_VERSION = {"aten": 10}
VERIFIERS = ["TRAINING"]  # torch.export.export() returns the training IR since 2.7

# Serializer enum numbers (torch/_export/serde/schema.py), not c10 numbering.
FLOAT32 = 7
INT8 = 2
LAYOUT_STRIDED = 7
POSITIONAL = 1
KEYWORD = 2

# Paths that appear inside stack traces. The tutorial path is the one the seed
# pages print; the site-packages prefix is the one their tracebacks show.
TUTORIAL = "/pytorch/executorch/docs/source/tutorials_source/export-to-executorch-tutorial.py"
SITE = "/opt/conda/envs/py_3.10/lib/python3.10/site-packages"
# Seed 004 shows its code without a file; this stands for the user's script.
DELEGATE_SCRIPT = "/workspace/executorch_delegate_demo/lower_with_partitioner.py"

GRAPH_MODULE_IMPL = "torch.fx.graph_module.GraphModule.__new__.<locals>.GraphModuleImpl"


# ----------------------------------------------------------------------------
# Symbolic sizes
# ----------------------------------------------------------------------------

class Sym:
    """A positive integer size symbol such as torch's `s0`, with its hint."""

    def __init__(self, name, hint):
        self.name = name
        self.hint = hint

    def srepr(self):
        # sympy.srepr prints assumptions sorted by name.
        return "Symbol('%s', integer=True, positive=True)" % self.name


def sym_int(value, coeff=1):
    """SymInt union for an int, a Sym, or coeff * Sym."""
    if isinstance(value, int):
        return {"as_int": value * coeff}
    if coeff == 1:
        expr = value.srepr()
    else:
        expr = "Mul(Integer(%d), %s)" % (coeff, value.srepr())
    return {"as_expr": {"expr_str": expr, "hint": {"as_int": value.hint * coeff}}}


def contiguous_strides(sizes):
    """Row-major strides; a stride may be (int coefficient) * (one symbol)."""
    strides = []
    coeff, sym = 1, None
    for size in reversed(sizes):
        strides.append(sym_int(sym, coeff) if sym is not None else sym_int(coeff))
        if isinstance(size, Sym):
            if sym is not None:
                raise ValueError("products of two symbols are not needed here")
            sym = size
        else:
            coeff *= size
    return list(reversed(strides))


def tensor_meta(dtype, sizes, requires_grad=False):
    return {
        "dtype": dtype,
        "sizes": [sym_int(s) for s in sizes],
        "requires_grad": requires_grad,
        "device": {"type": "cpu", "index": None},
        "strides": contiguous_strides(sizes),
        "storage_offset": {"as_int": 0},
        "layout": LAYOUT_STRIDED,
    }


# ----------------------------------------------------------------------------
# Arguments and metadata
# ----------------------------------------------------------------------------

def t(name):
    return {"as_tensor": {"name": name}}


def ints(values):
    return {"as_ints": list(values)}


def flt(value):
    return {"as_float": float(value)}


def i(value):
    return {"as_int": value}


def dtype_arg(dtype):
    return {"as_scalar_type": dtype}


def cpu_device():
    return {"as_device": {"type": "cpu", "index": None}}


def frame(path, line, func, code):
    return (path, line, func, code)


def stack_trace(*frames):
    """Format frames the way torch stores node.meta['stack_trace'].

    torch joins traceback.format_list() output and strips the ends, so the first
    frame has no leading indentation and there is no trailing newline.
    """
    text = "".join('  File "%s", line %d, in %s\n    %s\n' % f for f in frames)
    return text.strip()


def module_stack(root_type, *submodules):
    """nn_module_stack as non-strict export writes it: key,path,type joined by ';'."""
    entries = ["L__self__,,%s" % root_type]
    for fqn, type_name in submodules:
        entries.append("L__self__%s,%s,%s" % (fqn, fqn, type_name))
    return ";".join(entries)


def metadata(trace=None, nn_stack=None, torch_fn=None):
    meta = {}
    if trace:
        meta["stack_trace"] = trace
    if nn_stack:
        meta["nn_module_stack"] = nn_stack
    if torch_fn:
        meta["torch_fn"] = "%s;%s" % torch_fn
    return meta


# ----------------------------------------------------------------------------
# Program builder
# ----------------------------------------------------------------------------

class ProgramBuilder:
    """Collects graph inputs, nodes and metadata, then emits the JSON dict."""

    def __init__(self, forward_arg_names, submodules=()):
        self.inputs = []
        self.input_specs = []
        self.outputs = []
        self.output_specs = []
        self.nodes = []
        self.tensor_values = {}
        self.range_constraints = {}
        self.forward_arg_names = list(forward_arg_names)
        self.submodules = list(submodules)
        # Payloads for the PT2 archive: (fqn, input name, bytes, is_param, kind)
        self.payloads = []

    # Graph inputs, in torch's order: parameters, buffers, constants, user inputs.
    def parameter(self, name, fqn, sizes, data):
        self.inputs.append(t(name))
        self.input_specs.append({"parameter": {"arg": {"name": name}, "parameter_name": fqn}})
        self.tensor_values[name] = tensor_meta(FLOAT32, sizes, requires_grad=True)
        self.payloads.append((fqn, name, data, True, "weight"))

    def buffer(self, name, fqn, dtype, sizes, data):
        self.inputs.append(t(name))
        self.input_specs.append(
            {"buffer": {"arg": {"name": name}, "buffer_name": fqn, "persistent": True}})
        self.tensor_values[name] = tensor_meta(dtype, sizes)
        self.payloads.append((fqn, name, data, False, "weight"))

    def constant(self, name, fqn, dtype, sizes, data):
        self.inputs.append(t(name))
        self.input_specs.append(
            {"tensor_constant": {"arg": {"name": name}, "tensor_constant_name": fqn}})
        self.tensor_values[name] = tensor_meta(dtype, sizes)
        self.payloads.append((fqn, name, data, False, "constant"))

    def user_input(self, name, dtype, sizes):
        self.inputs.append(t(name))
        self.input_specs.append({"user_input": {"arg": t(name)}})
        self.tensor_values[name] = tensor_meta(dtype, sizes)

    def op(self, target, out, dtype, sizes, args, meta, kwargs=()):
        """An OpOverload node; args/kwargs are (schema name, Argument) pairs."""
        inputs = [{"name": n, "arg": a, "kind": POSITIONAL} for n, a in args]
        inputs += [{"name": n, "arg": a, "kind": KEYWORD} for n, a in kwargs]
        self.nodes.append({
            "target": "torch.ops." + target,
            "inputs": inputs,
            "outputs": [t(out)],
            "metadata": meta,
            "is_hop_single_tensor_return": None,
        })
        self.tensor_values[out] = tensor_meta(dtype, sizes)

    def call_delegate(self, out, lowered, args, dtype, sizes, meta):
        """executorch_call_delegate HOP returning one bare tensor.

        torch's serializer writes the LoweredBackendModule get_attr argument as
        the string "<module_name>-<backend_id>" and every HOP input positionally
        with an empty name.
        """
        inputs = [{"name": "", "arg": {"as_string": lowered}, "kind": POSITIONAL}]
        inputs += [{"name": "", "arg": t(a), "kind": POSITIONAL} for a in args]
        self.nodes.append({
            "target": "torch.ops.higher_order.executorch_call_delegate",
            "inputs": inputs,
            "outputs": [t(out)],
            "metadata": meta,
            "is_hop_single_tensor_return": True,
        })
        self.tensor_values[out] = tensor_meta(dtype, sizes)

    def output(self, name):
        self.outputs.append(t(name))
        self.output_specs.append({"user_output": {"arg": t(name)}})

    def build(self):
        leaf = {"type": None, "context": None, "children_spec": []}
        args_spec = {"type": "builtins.tuple", "context": "null",
                     "children_spec": [leaf for _ in self.forward_arg_names]}
        kwargs_spec = {"type": "builtins.dict", "context": "[]", "children_spec": []}
        in_spec = [1, {"type": "builtins.tuple", "context": "null",
                       "children_spec": [args_spec, kwargs_spec]}]
        if len(self.outputs) == 1:
            out_spec = [1, leaf]
        else:
            out_spec = [1, {"type": "builtins.tuple", "context": "null",
                            "children_spec": [leaf for _ in self.outputs]}]
        call_graph = [{"fqn": "", "signature": {
            "inputs": [],
            "outputs": [],
            "in_spec": json.dumps(in_spec),
            "out_spec": json.dumps(out_spec),
            "forward_arg_names": self.forward_arg_names,
        }}]
        call_graph += [{"fqn": fqn, "signature": None} for fqn in self.submodules]
        graph = {
            "inputs": self.inputs,
            "outputs": self.outputs,
            "nodes": self.nodes,
            "tensor_values": self.tensor_values,
            "sym_int_values": {},
            "sym_bool_values": {},
            "is_single_tensor_return": False,
            "custom_obj_values": {},
            "sym_float_values": {},
        }
        return {
            "graph_module": {
                "graph": graph,
                "signature": {"input_specs": self.input_specs,
                              "output_specs": self.output_specs},
                "module_call_graph": call_graph,
                "metadata": {},
                "treespec_namedtuple_fields": {},
            },
            "opset_version": dict(OPSET_VERSION),
            "range_constraints": self.range_constraints,
            "schema_version": dict(SCHEMA_VERSION),
            "verifiers": list(VERIFIERS),
            "torch_version": TORCH_VERSION,
        }


# ----------------------------------------------------------------------------
# Deterministic weights
# ----------------------------------------------------------------------------

def numel(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def f32_bytes(values):
    return struct.pack("<%df" % len(values), *values)


def uniform_f32(rng, sizes, bound):
    """Like nn.Module default init: U(-bound, bound), rounded to float32."""
    return f32_bytes([rng.uniform(-bound, bound) for _ in range(numel(sizes))])


def rand_f32(rng, sizes):
    """Like torch.rand: U(0, 1)."""
    return f32_bytes([rng.random() for _ in range(numel(sizes))])


def int8_bytes(rng, sizes, low, high):
    values = [rng.randint(low, high) for _ in range(numel(sizes))]
    return struct.pack("<%db" % len(values), *values)


# ----------------------------------------------------------------------------
# Frames shared by several models
# ----------------------------------------------------------------------------

CONV_FRAMES = (
    frame(SITE + "/torch/nn/modules/conv.py", 548, "forward",
          "return self._conv_forward(input, self.weight, self.bias)"),
    frame(SITE + "/torch/nn/modules/conv.py", 543, "_conv_forward",
          "return F.conv2d("),
)
RELU_FRAMES = (
    frame(SITE + "/torch/nn/modules/activation.py", 144, "forward",
          "return F.relu(input, inplace=self.inplace)"),
    frame(SITE + "/torch/nn/functional.py", 1697, "relu",
          "result = torch.relu(input)"),
)
LINEAR_FRAME = frame(SITE + "/torch/nn/modules/linear.py", 134, "forward",
                     "return F.linear(input, self.weight, self.bias)")
CONV2D_TYPE = "torch.nn.modules.conv.Conv2d"
RELU_TYPE = "torch.nn.modules.activation.ReLU"
LINEAR_TYPE = "torch.nn.modules.linear.Linear"


def conv_meta(root_type):
    return metadata(
        stack_trace(frame(TUTORIAL, 64, "forward", "a = self.conv(x)"), *CONV_FRAMES),
        module_stack(root_type, ("conv", CONV2D_TYPE)),
        ("conv2d_1", "builtin_function_or_method.conv2d"))


def relu_meta(root_type):
    return metadata(
        stack_trace(frame(TUTORIAL, 65, "forward", "return self.relu(a)"), *RELU_FRAMES),
        module_stack(root_type, ("relu", RELU_TYPE)),
        ("relu_1", "function.relu"))


CONV_W = [16, 3, 3, 3]
CONV_B = [16]
IMAGE = [1, 3, 256, 256]
CONV_OUT = [1, 16, 256, 256]


# ----------------------------------------------------------------------------
# The seed models
# ----------------------------------------------------------------------------

def simple_conv():
    """Seed 001, "导出模型": SimpleConv, conv2d(3->16, k3, pad 1) + relu."""
    rng = random.Random(1001)
    bound = 1.0 / (3 * 3 * 3) ** 0.5
    b = ProgramBuilder(["x"], submodules=["conv", "relu"])
    b.parameter("p_conv_weight", "conv.weight", CONV_W, uniform_f32(rng, CONV_W, bound))
    b.parameter("p_conv_bias", "conv.bias", CONV_B, uniform_f32(rng, CONV_B, bound))
    b.user_input("x", FLOAT32, IMAGE)
    b.op("aten.conv2d.default", "conv2d", FLOAT32, CONV_OUT,
         [("input", t("x")), ("weight", t("p_conv_weight")), ("bias", t("p_conv_bias")),
          ("stride", ints([1, 1])), ("padding", ints([1, 1]))],
         conv_meta("__main__.SimpleConv"))
    b.op("aten.relu.default", "relu", FLOAT32, CONV_OUT, [("self", t("conv2d"))],
         relu_meta("__main__.SimpleConv"))
    b.output("relu")
    return b


def basic():
    """Seed 001, "表达动态性": Basic x + y with static shapes."""
    b = ProgramBuilder(["x", "y"])
    b.user_input("x", FLOAT32, [3, 3])
    b.user_input("y", FLOAT32, [3, 3])
    b.op("aten.add.Tensor", "add", FLOAT32, [3, 3], [("self", t("x")), ("other", t("y"))],
         metadata(stack_trace(frame(TUTORIAL, 100, "forward", "return x + y")),
                  module_stack("__main__.Basic"), ("add_1", "method_descriptor.add")))
    b.output("add")
    return b


def basic_dynamic():
    """Seed 001, "表达动态性": Basic with dim 1 dynamic, Dim("dim1_x", min=1, max=10)."""
    s0 = Sym("s0", 3)
    b = ProgramBuilder(["x", "y"])
    b.user_input("x", FLOAT32, [3, s0])
    b.user_input("y", FLOAT32, [3, s0])
    b.op("aten.add.Tensor", "add", FLOAT32, [3, s0], [("self", t("x")), ("other", t("y"))],
         metadata(stack_trace(frame(TUTORIAL, 127, "forward", "return x + y")),
                  module_stack("__main__.Basic"), ("add_1", "method_descriptor.add")))
    b.output("add")
    b.range_constraints["s0"] = {"min_val": 1, "max_val": 10}
    return b


def simple_conv_quantized():
    """Seed 001, "执行量化": SimpleConv after prepare_pt2e/convert_pt2e, re-exported.

    convert_pt2e folds the conv weight into the int8 buffer `_frozen_param0`;
    the quantize/dequantize nodes it inserts carry no stack trace of their own,
    so the re-export records the generated GraphModule code (<eval_with_key>).
    """
    rng = random.Random(1002)
    bound = 1.0 / (3 * 3 * 3) ** 0.5
    root = "__main__.SimpleConv"
    eval_file = "<eval_with_key>.203"
    q_args = [("scale", flt(1.0)), ("zero_point", i(0)), ("quant_min", i(-128)),
              ("quant_max", i(127)), ("dtype", dtype_arg(INT8))]
    b = ProgramBuilder(["x"], submodules=["conv"])
    b.parameter("p_conv_bias", "conv.bias", CONV_B, uniform_f32(rng, CONV_B, bound))
    b.buffer("b__frozen_param0", "_frozen_param0", INT8, CONV_W,
             int8_bytes(rng, CONV_W, -127, 127))
    b.user_input("x", FLOAT32, IMAGE)
    b.op("quantized_decomposed.dequantize_per_tensor.default", "dequantize_per_tensor",
         FLOAT32, CONV_W,
         [("input", t("b__frozen_param0")), ("scale", flt(1.0)), ("zero_point", i(0)),
          ("quant_min", i(-127)), ("quant_max", i(127)), ("dtype", dtype_arg(INT8))],
         conv_meta(root))
    b.op("quantized_decomposed.quantize_per_tensor.default", "quantize_per_tensor",
         INT8, IMAGE, [("input", t("x"))] + q_args,
         metadata(stack_trace(frame(
             eval_file, 9, "forward",
             "quantize_per_tensor_default_1 = torch.ops.quantized_decomposed.quantize_per_tensor."
             "default(x, 1.0, 0, -128, 127, torch.int8);  x = None")),
             module_stack(GRAPH_MODULE_IMPL),
             ("quantize_per_tensor.default_1", "OpOverload.quantize_per_tensor.default")))
    b.op("quantized_decomposed.dequantize_per_tensor.default", "dequantize_per_tensor_1",
         FLOAT32, IMAGE, [("input", t("quantize_per_tensor"))] + q_args, conv_meta(root))
    b.op("aten.conv2d.default", "conv2d", FLOAT32, CONV_OUT,
         [("input", t("dequantize_per_tensor_1")), ("weight", t("dequantize_per_tensor")),
          ("bias", t("p_conv_bias")), ("stride", ints([1, 1])), ("padding", ints([1, 1]))],
         conv_meta(root))
    b.op("aten.relu.default", "relu", FLOAT32, CONV_OUT, [("self", t("conv2d"))],
         relu_meta(root))
    b.op("quantized_decomposed.quantize_per_tensor.default", "quantize_per_tensor_1",
         INT8, CONV_OUT, [("input", t("relu"))] + q_args, relu_meta(root))
    b.op("quantized_decomposed.dequantize_per_tensor.default", "dequantize_per_tensor_2",
         FLOAT32, CONV_OUT, [("input", t("quantize_per_tensor_1"))] + q_args,
         metadata(stack_trace(frame(
             eval_file, 14, "forward",
             "dequantize_per_tensor_default_2 = "
             "torch.ops.quantized_decomposed.dequantize_per_tensor.default("
             "quantize_per_tensor_default_2, 1.0, 0, -128, 127, torch.int8);  "
             "quantize_per_tensor_default_2 = None")),
             module_stack(GRAPH_MODULE_IMPL),
             ("dequantize_per_tensor.default_1", "OpOverload.dequantize_per_tensor.default")))
    b.output("dequantize_per_tensor_2")
    return b


def _encode_decode(cls, line, in_features, out_features):
    code = "return torch.nn.functional.linear(x, torch.randn(%d, %d))" % (
        out_features, in_features)
    trace = stack_trace(frame(TUTORIAL, line, "forward", code))
    root = "__main__." + cls
    b = ProgramBuilder(["x"])
    b.user_input("x", FLOAT32, [1, in_features])
    b.op("aten.randn.default", "randn", FLOAT32, [out_features, in_features],
         [("size", ints([out_features, in_features]))],
         metadata(trace, module_stack(root), ("randn_1", "builtin_function_or_method.randn")),
         kwargs=[("device", cpu_device()), ("pin_memory", {"as_bool": False})])
    b.op("aten.linear.default", "linear", FLOAT32, [1, out_features],
         [("input", t("x")), ("weight", t("randn"))],
         metadata(trace, module_stack(root), ("linear_1", "builtin_function_or_method.linear")))
    b.output("linear")
    return b


def encode():
    """Seed 001, "降级到 Edge Dialect": Encode, linear(x, randn(5, 10))."""
    return _encode_decode("Encode", 261, 10, 5)


def decode():
    """Seed 001, "降级到 Edge Dialect": Decode, linear(x, randn(10, 5))."""
    return _encode_decode("Decode", 266, 5, 10)


def lowerable_sin():
    """Seed 001, "降低整个模块" (and seed 004 flow 1): LowerableModule, sin(x)."""
    b = ProgramBuilder(["x"])
    b.user_input("x", FLOAT32, [1])
    b.op("aten.sin.default", "sin", FLOAT32, [1], [("self", t("x"))],
         metadata(stack_trace(frame(TUTORIAL, 355, "forward", "return torch.sin(x)")),
                  module_stack("__main__.LowerableModule"),
                  ("sin_1", "builtin_function_or_method.sin")))
    b.output("sin")
    return b


def composed():
    """Seed 001, "将降级后的模块组合到另一个模块中": ComposedModule.

    Both calls go to the same lowered sin module (lowered_module_0, backend
    BackendWithCompilerDemo); the bias 0.3 is a lifted tensor constant.
    """
    root = "__main__.ComposedModule"
    lowered_type = "executorch.exir.lowered_backend_module.LoweredBackendModule"
    delegate_frame = frame(SITE + "/executorch/exir/lowered_backend_module.py", 344, "forward",
                           "return executorch_call_delegate(self, *args)")
    add_frames = (frame(TUTORIAL, 421, "forward", "ret = self.non_lowerable(a, b)"),
                  frame(TUTORIAL, 409, "forward",
                        "return torch.add(torch.add(a, b), self.bias)"))
    add_stack = module_stack(root, ("non_lowerable", "__main__.NotLowerableModule"))
    b = ProgramBuilder(["x"], submodules=["non_lowerable", "lowerable"])
    b.constant("c_non_lowerable_bias", "non_lowerable.bias", FLOAT32, [1], f32_bytes([0.3]))
    b.user_input("x", FLOAT32, [1])
    lowered = "lowered_module_0-BackendWithCompilerDemo"
    b.call_delegate("executorch_call_delegate", lowered, ["x"], FLOAT32, [1], metadata(
        stack_trace(frame(TUTORIAL, 419, "forward", "a = self.lowerable(x)"), delegate_frame),
        module_stack(root, ("lowerable", lowered_type))))
    b.call_delegate("executorch_call_delegate_1", lowered, ["executorch_call_delegate"],
                    FLOAT32, [1], metadata(
        stack_trace(frame(TUTORIAL, 420, "forward", "b = self.lowerable(a)"), delegate_frame),
        module_stack(root, ("lowerable", lowered_type))))
    b.op("aten.add.Tensor", "add", FLOAT32, [1],
         [("self", t("executorch_call_delegate")), ("other", t("executorch_call_delegate_1"))],
         metadata(stack_trace(*add_frames), add_stack,
                  ("add_1", "builtin_function_or_method.add")))
    b.op("aten.add.Tensor", "add_1", FLOAT32, [1],
         [("self", t("add")), ("other", t("c_non_lowerable_bias"))],
         metadata(stack_trace(*add_frames), add_stack,
                  ("add_2", "builtin_function_or_method.add")))
    b.output("executorch_call_delegate")
    b.output("executorch_call_delegate_1")
    b.output("add_1")
    return b


def foo():
    """Seed 001, "模块的分区和下部组件": Foo, mm/add/sub/mm/add on 2x2 inputs."""
    root = module_stack("__main__.Foo")

    def meta(line, code, fn):
        return metadata(stack_trace(frame(TUTORIAL, line, "forward", code)), root, fn)

    b = ProgramBuilder(["a", "x", "b"])
    for name in ("a", "x", "b"):
        b.user_input(name, FLOAT32, [2, 2])
    b.op("aten.mm.default", "mm", FLOAT32, [2, 2], [("self", t("a")), ("mat2", t("x"))],
         meta(455, "y = torch.mm(a, x)", ("mm_1", "builtin_function_or_method.mm")))
    b.op("aten.add.Tensor", "add", FLOAT32, [2, 2], [("self", t("mm")), ("other", t("b"))],
         meta(456, "z = y + b", ("add_1", "method_descriptor.add")))
    b.op("aten.sub.Tensor", "sub", FLOAT32, [2, 2], [("self", t("add")), ("other", t("a"))],
         meta(457, "a = z - a", ("sub_1", "method_descriptor.sub")))
    b.op("aten.mm.default", "mm_1", FLOAT32, [2, 2], [("self", t("sub")), ("mat2", t("x"))],
         meta(458, "y = torch.mm(a, x)", ("mm_2", "builtin_function_or_method.mm")))
    b.op("aten.add.Tensor", "add_1", FLOAT32, [2, 2], [("self", t("mm_1")), ("other", t("b"))],
         meta(459, "z = y + b", ("add_2", "method_descriptor.add")))
    b.output("add_1")
    return b


def model_addmul():
    """Seed 004, flow 3: Model, x+y, *y, -y, /y, *y, +y on [1, 3] inputs."""
    root = module_stack("__main__.Model")
    steps = [
        ("aten.add.Tensor", "add", "x", 17, "x = x + y", ("add_1", "method_descriptor.add")),
        ("aten.mul.Tensor", "mul", "add", 18, "x = x * y", ("mul_1", "method_descriptor.mul")),
        ("aten.sub.Tensor", "sub", "mul", 19, "x = x - y", ("sub_1", "method_descriptor.sub")),
        ("aten.div.Tensor", "div", "sub", 20, "x = x / y", ("div_1", "method_descriptor.div")),
        ("aten.mul.Tensor", "mul_1", "div", 21, "x = x * y", ("mul_2", "method_descriptor.mul")),
        ("aten.add.Tensor", "add_1", "mul_1", 22, "x = x + y", ("add_2", "method_descriptor.add")),
    ]
    b = ProgramBuilder(["x", "y"])
    b.user_input("x", FLOAT32, [1, 3])
    b.user_input("y", FLOAT32, [1, 3])
    for target, out, lhs, line, code, fn in steps:
        b.op(target, out, FLOAT32, [1, 3], [("self", t(lhs)), ("other", t("y"))],
             metadata(stack_trace(frame(DELEGATE_SCRIPT, line, "forward", code)), root, fn))
    b.output("add_1")
    return b


def m_linear_clamp():
    """Seed 001, "保存到文件" end-to-end example: M, linear(x + param).clamp(0, 1).

    M is first exported for training and its .module() exported again; the
    second export keeps the node metadata of the first one.
    """
    rng = random.Random(1003)
    root = "__main__.M"
    line = frame(TUTORIAL, 563, "forward",
                 "return self.linear(x + self.param).clamp(min=0.0, max=1.0)")
    b = ProgramBuilder(["x"], submodules=["linear"])
    b.parameter("p_param", "param", [3, 4], rand_f32(rng, [3, 4]))
    b.parameter("p_linear_weight", "linear.weight", [5, 4], uniform_f32(rng, [5, 4], 0.5))
    b.parameter("p_linear_bias", "linear.bias", [5], uniform_f32(rng, [5], 0.5))
    b.user_input("x", FLOAT32, [3, 4])
    b.op("aten.add.Tensor", "add", FLOAT32, [3, 4], [("self", t("x")), ("other", t("p_param"))],
         metadata(stack_trace(line), module_stack(root), ("add_1", "method_descriptor.add")))
    b.op("aten.linear.default", "linear", FLOAT32, [3, 5],
         [("input", t("add")), ("weight", t("p_linear_weight")), ("bias", t("p_linear_bias"))],
         metadata(stack_trace(line, LINEAR_FRAME), module_stack(root, ("linear", LINEAR_TYPE)),
                  ("linear_1", "builtin_function_or_method.linear")))
    b.op("aten.clamp.default", "clamp", FLOAT32, [3, 5],
         [("self", t("linear")), ("min", flt(0.0)), ("max", flt(1.0))],
         metadata(stack_trace(line), module_stack(root), ("clamp_1", "method_descriptor.clamp")))
    b.output("clamp")
    return b


MODELS = [
    ("simple_conv", simple_conv),
    ("basic", basic),
    ("basic_dynamic", basic_dynamic),
    ("simple_conv_quantized", simple_conv_quantized),
    ("encode", encode),
    ("decode", decode),
    ("lowerable_sin", lowerable_sin),
    ("composed", composed),
    ("foo", foo),
    ("model_addmul", model_addmul),
    ("m_linear_clamp", m_linear_clamp),
]


# ----------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------

def _tensor_names(arg):
    if "as_tensor" in arg:
        return [arg["as_tensor"]["name"]]
    if "as_tensors" in arg:
        return [a["name"] for a in arg["as_tensors"]]
    return []


def validate(name, program, payloads):
    """Structural checks a torch.export loader relies on; raises on failure."""
    def fail(msg):
        raise SystemExit("gen_seed_models: %s: %s" % (name, msg))

    gm = program["graph_module"]
    graph = gm["graph"]
    values = graph["tensor_values"]
    specs_in = gm["signature"]["input_specs"]
    specs_out = gm["signature"]["output_specs"]
    if len(specs_in) != len(graph["inputs"]):
        fail("input_specs and graph inputs differ in length")
    for k, (spec, arg) in enumerate(zip(specs_in, graph["inputs"])):
        (kind, payload), = spec.items()
        spec_name = payload["arg"]["as_tensor"]["name"] if kind == "user_input" \
            else payload["arg"]["name"]
        if _tensor_names(arg) != [spec_name]:
            fail("input %d: spec names %s, graph has %s" % (k, spec_name, arg))
    if len(specs_out) != len(graph["outputs"]):
        fail("output_specs and graph outputs differ in length")
    for k, (spec, arg) in enumerate(zip(specs_out, graph["outputs"])):
        if spec["user_output"]["arg"] != arg:
            fail("output %d: spec %s, graph %s" % (k, spec, arg))

    defined = set()
    for arg in graph["inputs"]:
        for n in _tensor_names(arg):
            if n in defined:
                fail("input %s defined twice" % n)
            defined.add(n)
    for idx, node in enumerate(graph["nodes"]):
        for named in node["inputs"]:
            for n in _tensor_names(named["arg"]):
                if n not in defined:
                    fail("node %d (%s) uses %s before it is defined" % (idx, node["target"], n))
        for out in node["outputs"]:
            for n in _tensor_names(out):
                if n in defined:
                    fail("value %s defined twice" % n)
                defined.add(n)
    for arg in graph["outputs"]:
        for n in _tensor_names(arg):
            if n not in defined:
                fail("graph output %s is never defined" % n)
    if defined != set(values):
        fail("tensor_values keys %s do not match the values %s"
             % (sorted(values), sorted(defined)))

    by_input = {}
    for spec in specs_in:
        (kind, payload), = spec.items()
        if kind in ("parameter", "buffer", "tensor_constant"):
            fqn = payload.get("parameter_name") or payload.get("buffer_name") \
                or payload.get("tensor_constant_name")
            by_input[payload["arg"]["name"]] = fqn
    for fqn, input_name, data, _, _ in payloads:
        if by_input.get(input_name) != fqn:
            fail("payload %s is not the input %s" % (fqn, input_name))
        meta = values[input_name]
        width = {FLOAT32: 4, INT8: 1}[meta["dtype"]]
        count = numel([s["as_int"] for s in meta["sizes"]])
        if len(data) != count * width:
            fail("payload %s has %d bytes, expected %d" % (fqn, len(data), count * width))
    if set(by_input) != {p[1] for p in payloads}:
        fail("every parameter, buffer and constant needs a payload")

    text = dump_json(program)
    if json.loads(text) != program:
        fail("JSON does not round-trip")


# ----------------------------------------------------------------------------
# Serialization
# ----------------------------------------------------------------------------

def dump_json(obj):
    # torch's serializer: json.dumps with default separators, no indentation.
    return json.dumps(obj, allow_nan=False)


def payload_config(entries, values):
    config = {}
    for fqn, input_name, path_name, is_param in entries:
        config[fqn] = {"path_name": path_name, "is_param": is_param, "use_pickle": False,
                       "tensor_meta": values[input_name]}
    return dump_json({"config": config})


class ZipWriter:
    """STORED zip in the layout of PyTorchFileWriter (miniz) output.

    Local headers carry version 0, flags 0x0808 (data descriptor + UTF-8), zero
    time/date/CRC/sizes; an "FB" extra field pads every payload to a 64-byte
    file offset; each payload is followed by a signed data descriptor; the
    central directory repeats the real CRC and sizes.
    """

    ALIGN = 64

    def __init__(self):
        self.buf = bytearray()
        self.entries = []

    def add(self, name, data):
        name_bytes = name.encode("utf-8")
        offset = len(self.buf)
        start = offset + 30 + len(name_bytes) + 4
        pad = (-start) % self.ALIGN
        extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        crc = zlib.crc32(data) & 0xFFFFFFFF
        self.buf += struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, 0x0808, 0, 0, 0, 0, 0, 0,
                                len(name_bytes), len(extra))
        self.buf += name_bytes + extra
        assert len(self.buf) % self.ALIGN == 0
        self.buf += data
        self.buf += struct.pack("<IIII", 0x08074B50, crc, len(data), len(data))
        self.entries.append((name_bytes, crc, len(data), offset))

    def finish(self):
        cd_start = len(self.buf)
        for name_bytes, crc, size, offset in self.entries:
            self.buf += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 0, 0x0808, 0, 0, 0,
                                    crc, size, size, len(name_bytes), 0, 0, 0, 0, 0, offset)
            self.buf += name_bytes
        cd_size = len(self.buf) - cd_start
        self.buf += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(self.entries),
                                len(self.entries), cd_size, cd_start, 0)
        return bytes(self.buf)


def build_pt2(stem, program_text, builder, values):
    root = stem + "/"
    z = ZipWriter()
    weights, constants = [], []
    for fqn, input_name, data, is_param, kind in builder.payloads:
        if kind == "weight":
            path = "weight_%d" % len(weights)
            z.add(root + "data/weights/" + path, data)
            weights.append((fqn, input_name, path, is_param))
    z.add(root + "data/weights/model_weights_config.json",
          payload_config(weights, values).encode("utf-8"))
    for fqn, input_name, data, is_param, kind in builder.payloads:
        if kind == "constant":
            path = "tensor_%d" % len(constants)
            z.add(root + "data/constants/" + path, data)
            constants.append((fqn, input_name, path, is_param))
    z.add(root + "data/constants/model_constants_config.json",
          payload_config(constants, values).encode("utf-8"))
    z.add(root + "models/model.json", program_text.encode("utf-8"))
    z.add(root + "archive_format", b"pt2")
    z.add(root + "archive_version", b"0")
    z.add(root + ".data/version", b"6\n")
    z.add(root + "byteorder", b"little")
    # torch writes a random 40-digit id; derive one from the content instead.
    digest = hashlib.sha256(bytes(z.buf)).digest()
    serial = "%040d" % (int.from_bytes(digest, "little") % 10 ** 40)
    z.add(root + ".data/serialization_id", serial.encode("ascii"))
    return z.finish()


def generate():
    """Return {file name: bytes} for every generated file."""
    files = {}
    for stem, make in MODELS:
        builder = make()
        program = builder.build()
        validate(stem, program, builder.payloads)
        text = dump_json(program)
        files[stem + ".json"] = text.encode("utf-8")
        files[stem + ".pt2"] = build_pt2(
            stem, text, builder, program["graph_module"]["graph"]["tensor_values"])
    return files


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(
        description="Write the seed models as torch.export JSON and PT2 archives.")
    parser.add_argument("--out", default=os.path.join(here, "..", "testdata", "models"),
                        help="output folder (default: testdata/models)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; fail if the files on disk differ")
    args = parser.parse_args(argv)
    files = generate()
    if args.check:
        stale = []
        for name, data in sorted(files.items()):
            path = os.path.join(args.out, name)
            try:
                with open(path, "rb") as f:
                    if f.read() == data:
                        continue
            except OSError:
                pass
            stale.append(name)
        if stale:
            print("gen_seed_models: out of date: " + ", ".join(stale), file=sys.stderr)
            return 1
        print("gen_seed_models: %d files up to date" % len(files))
        return 0
    os.makedirs(args.out, exist_ok=True)
    for name, data in sorted(files.items()):
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)
    print("gen_seed_models: wrote %d files to %s" % (len(files), os.path.normpath(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
