#!/usr/bin/env python3
"""Writes benchmark programs in the layout torch.export (torch 2.11) gives them.

Families (all deterministic; sizes scale with --nodes or the shape flags):
  mlp      Linear + ReLU layers
  convnet  MobileNet-v2-like: conv / batch_norm / hardtanh_ inverted residual blocks
  resnet   ResNet-like: conv / batch_norm / relu_ / add_ basic blocks, max_pool2d stem
  llama    Llama-like decoder: embedding, RMSNorm, rotary, attention with a KV
           cache held in mutable buffers (index_copy_), SwiGLU feed-forward

The output is a PT2 archive (schema 8.17, raw weights + model_weights_config.json,
STORED members with 64-byte data alignment, ZIP64 past 4 GiB) written as a
stream, so 4 GB of weights need no memory. `--weights sparse` leaves each
tensor's bytes a hole except a 64-byte tag that keeps tensors distinct (so a
deduplicating emitter still copies every byte); `random` writes seeded values.

Without --decomposed the graph holds what torch.export.export() records before
run_decompositions (linear, conv2d, batch_norm, relu_, hardtanh_, add_, rms_norm,
scaled_dot_product_attention, index_copy_, transpose.int, ...). With
--decomposed it holds only out-of-place ops the toolchain lowers today
(RMSNorm, rotary and attention written with pow/mean/rsqrt/matmul/softmax, the
KV cache update as index_put with a buffer_mutation output).

usage: gen_models.py FAMILY -o OUT.pt2 [--nodes N] [--dtype fp32|fp16|int8] ...
       gen_models.py FAMILY --json OUT.json   (the program JSON alone)
"""
import argparse
import json
import os
import random
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from gen_seed_models import dump_json, flt, frame, i, ints, module_stack, stack_trace, t  # noqa: E402

TORCH_VERSION = "2.11.0+cu130"
SCHEMA_VERSION = {"major": 8, "minor": 17}
SITE = "/opt/torch/.venv/lib/python3.12/site-packages"
MODEL_FILE = "/workspace/bench/models.py"

# Serializer ScalarType numbers (torch/_export/serde/schema.py).
DTYPES = {"fp32": (7, 4), "fp16": (6, 2), "int8": (2, 1), "int64": (5, 8), "bool": (12, 1)}
LAYOUT_STRIDED = 7


def tensor_meta(dtype, sizes, requires_grad=False):
    strides, step = [], 1
    for s in reversed(sizes):
        strides.append(step)
        step *= s
    return {"dtype": DTYPES[dtype][0], "sizes": [{"as_int": s} for s in sizes],
            "requires_grad": requires_grad, "device": {"type": "cpu", "index": None},
            "strides": [{"as_int": s} for s in reversed(strides)],
            "storage_offset": {"as_int": 0}, "layout": LAYOUT_STRIDED}


def numel(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


class Program:
    """torch.fx-style naming, placeholders in torch's order, nodes with metadata."""

    def __init__(self, root_type, forward_arg_names):
        self.root_type = root_type
        self.forward_arg_names = forward_arg_names
        self.params, self.buffers, self.user_inputs = [], [], []
        self.nodes, self.values = [], {}
        self.counts = {}
        self.fn_counts = {}
        self.mutations = []  # (buffer fqn, value name) for --decomposed KV caches
        self.payloads = []   # (fqn, placeholder, dtype, sizes, is_param)
        self.outputs = []
        self.scope = []      # [(fqn, type)] module path of the nodes being added
        self.line = 10

    def fresh(self, base):
        k = self.counts.get(base, 0)
        self.counts[base] = k + 1
        name = base if k == 0 else "%s_%d" % (base, k)
        while name in self.values:  # an input already holds the name
            k = self.counts[base]
            self.counts[base] = k + 1
            name = "%s_%d" % (base, k)
        return name

    def parameter(self, fqn, dtype, sizes):
        name = "p_" + fqn.replace(".", "_")
        self.params.append((name, fqn))
        self.values[name] = tensor_meta(dtype, sizes, requires_grad=dtype != "int8")
        self.payloads.append((fqn, name, dtype, sizes, True))
        return name

    def buffer(self, fqn, dtype, sizes):
        name = "b_" + fqn.replace(".", "_")
        self.buffers.append((name, fqn))
        self.values[name] = tensor_meta(dtype, sizes)
        self.payloads.append((fqn, name, dtype, sizes, False))
        return name

    def user_input(self, name, dtype, sizes):
        self.user_inputs.append(name)
        self.values[name] = tensor_meta(dtype, sizes)
        return name

    def op(self, target, base, args, dtype, sizes, code, fn, kwargs=()):
        """One node; args/kwargs are (schema name, Argument); returns the output name."""
        name = self.fresh(base)
        k = self.fn_counts.get(fn, 0) + 1
        self.fn_counts[fn] = k
        self.line = 10 + (self.line + 7) % 400
        frames = [frame(MODEL_FILE, self.line, "forward", code)]
        stack = module_stack(self.root_type)
        if self.scope:
            stack += ";" + ";".join("L__self__%s,%s,%s" % (p, p, ty) for p, ty in self.scope)
        inputs = [{"name": n, "arg": a, "kind": 1} for n, a in args]
        inputs += [{"name": n, "arg": a, "kind": 2} for n, a in kwargs]
        self.nodes.append({
            "target": "torch.ops." + target, "inputs": inputs, "outputs": [t(name)],
            "metadata": {"stack_trace": stack_trace(*frames), "nn_module_stack": stack,
                         "torch_fn": "%s_%d;%s" % (fn.split(".")[-1], k, fn)},
            "is_hop_single_tensor_return": None, "name": name})
        self.values[name] = tensor_meta(dtype, sizes)
        return name

    def build(self):
        leaf = {"type": None, "context": None, "children_spec": []}
        in_spec = [1, {"type": "builtins.tuple", "context": "null", "children_spec": [
            {"type": "builtins.tuple", "context": "null",
             "children_spec": [leaf for _ in self.forward_arg_names]},
            {"type": "builtins.dict", "context": "[]", "children_spec": []}]}]
        out_spec = [1, leaf]
        inputs = [t(n) for n, _ in self.params] + [t(n) for n, _ in self.buffers] + \
            [t(n) for n in self.user_inputs]
        input_specs = [{"parameter": {"arg": {"name": n}, "parameter_name": f}} for n, f in self.params]
        input_specs += [{"buffer": {"arg": {"name": n}, "buffer_name": f, "persistent": True}}
                        for n, f in self.buffers]
        input_specs += [{"user_input": {"arg": t(n)}} for n in self.user_inputs]
        outputs = [t(n) for _, n in self.mutations] + [t(n) for n in self.outputs]
        output_specs = [{"buffer_mutation": {"arg": {"name": n}, "buffer_name": f}}
                        for f, n in self.mutations]
        output_specs += [{"user_output": {"arg": t(n)}} for n in self.outputs]
        # torch lists tensor_values in definition order: placeholders, then nodes.
        order = [n for n, _ in self.params] + [n for n, _ in self.buffers] + self.user_inputs
        values = {n: self.values[n] for n in order}
        for node in self.nodes:
            values[node["name"]] = self.values[node["name"]]
        graph = {"inputs": inputs, "outputs": outputs, "nodes": self.nodes, "tensor_values": values,
                 "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": False,
                 "custom_obj_values": {}, "sym_float_values": {}}
        return {
            "graph_module": {
                "graph": graph,
                "signature": {"input_specs": input_specs, "output_specs": output_specs},
                "module_call_graph": [{"fqn": "", "signature": {
                    "inputs": [], "outputs": [], "in_spec": json.dumps(in_spec),
                    "out_spec": json.dumps(out_spec),
                    "forward_arg_names": self.forward_arg_names}}],
                "metadata": {}, "treespec_namedtuple_fields": {}},
            "opset_version": {"aten": 10}, "range_constraints": {},
            "schema_version": dict(SCHEMA_VERSION), "verifiers": ["TRAINING"],
            "torch_version": TORCH_VERSION, "guards_code": []}


class Scope:
    def __init__(self, program, fqn, type_name):
        self.program, self.entry = program, (fqn, type_name)

    def __enter__(self):
        self.program.scope.append(self.entry)

    def __exit__(self, *exc):
        self.program.scope.pop()


# ----------------------------------------------------------------------------
# Layers shared by the families
# ----------------------------------------------------------------------------

class Layers:
    def __init__(self, program, dtype, decomposed):
        self.p, self.dtype, self.decomposed = program, dtype, decomposed
        # int8: weights are int8 buffers dequantized in the graph (weight-only quantization).
        self.act = "fp16" if dtype == "fp16" else "fp32"

    def weight(self, fqn, sizes):
        p = self.p
        if self.dtype != "int8":
            return p.parameter(fqn, self.dtype, sizes)
        q = p.buffer(fqn + "_int8", "int8", sizes)
        return p.op("quantized_decomposed.dequantize_per_tensor.default", "dequantize_per_tensor",
                    [("input", t(q)), ("scale", flt(0.02)), ("zero_point", i(0)),
                     ("quant_min", i(-127)), ("quant_max", i(127)), ("dtype", {"as_scalar_type": 2})],
                    "fp32", sizes, "w = self.%s" % fqn, "OpOverload.dequantize_per_tensor.default")

    def vector(self, fqn, n, kind="parameter"):
        dtype = self.act
        if kind == "buffer":
            return self.p.buffer(fqn, dtype, [n])
        return self.p.parameter(fqn, dtype, [n])

    def linear(self, fqn, x, in_f, out_f, out_sizes, bias=True):
        p = self.p
        with Scope(p, fqn, "torch.nn.modules.linear.Linear"):
            w = self.weight(fqn + ".weight", [out_f, in_f])
            args = [("input", t(x)), ("weight", t(w))]
            if bias:
                args.append(("bias", t(self.vector(fqn + ".bias", out_f))))
            return p.op("aten.linear.default", "linear", args, self.act, out_sizes,
                        "return F.linear(input, self.weight, self.bias)",
                        "builtin_function_or_method.linear")

    def conv(self, fqn, x, cin, cout, k, stride, hw, groups=1):
        p = self.p
        pad = k // 2
        out_hw = [(s + 2 * pad - k) // stride + 1 for s in hw]
        with Scope(p, fqn, "torch.nn.modules.conv.Conv2d"):
            w = self.weight(fqn + ".weight", [cout, cin // groups, k, k])
            args = [("input", t(x)), ("weight", t(w)), ("bias", {"as_none": True})]
            if stride != 1 or pad:
                args.append(("stride", ints([stride, stride])))
            if pad:
                args.append(("padding", ints([pad, pad])))
            if groups != 1:
                args += [("dilation", ints([1, 1])), ("groups", i(groups))]
            y = p.op("aten.conv2d.default", "conv2d", args, self.act, [1, cout] + out_hw,
                     "return self._conv_forward(input, self.weight, self.bias)",
                     "builtin_function_or_method.conv2d")
        return y, out_hw

    def batch_norm(self, fqn, x, c, sizes):
        p = self.p
        with Scope(p, fqn, "torch.nn.modules.batchnorm.BatchNorm2d"):
            w = self.vector(fqn + ".weight", c)
            b = self.vector(fqn + ".bias", c)
            mean = self.vector(fqn + ".running_mean", c, "buffer")
            var = self.vector(fqn + ".running_var", c, "buffer")
            return p.op("aten.batch_norm.default", "batch_norm",
                        [("input", t(x)), ("weight", t(w)), ("bias", t(b)), ("running_mean", t(mean)),
                         ("running_var", t(var)), ("training", {"as_bool": False}),
                         ("momentum", flt(0.1)), ("eps", flt(1e-5)), ("cudnn_enabled", {"as_bool": False})],
                        self.act, sizes, "return F.batch_norm(", "function.batch_norm")

    def unary(self, name, x, sizes, extra=(), inplace=False):
        target = name + ("_" if inplace and not self.decomposed else "")
        return self.p.op("aten.%s.default" % target, target, [("self", t(x))] + list(extra), self.act,
                         sizes, "return F.%s(input)" % name, "function." + name)

    def binary(self, name, a, b, sizes, inplace=False, scalar=False):
        target = name + ("_" if inplace and not self.decomposed else "")
        other = flt(b) if scalar else t(b)
        overload = "Scalar" if scalar else "Tensor"
        return self.p.op("aten.%s.%s" % (target, overload), target, [("self", t(a)), ("other", other)],
                         self.act, sizes, "x = x %s y" % {"add": "+", "mul": "*", "sub": "-"}.get(name, name),
                         "method_descriptor." + target)

    def global_pool(self, x, c):
        if self.decomposed:  # adaptive_avg_pool2d has no decomposition yet
            return self.p.op("aten.mean.dim", "mean", [("self", t(x)), ("dim", ints([-1, -2])),
                                                       ("keepdim", {"as_bool": True})], self.act, [1, c, 1, 1],
                             "x = x.mean((-1, -2), keepdim=True)", "method_descriptor.mean")
        return self.p.op("aten.adaptive_avg_pool2d.default", "adaptive_avg_pool2d",
                         [("self", t(x)), ("output_size", ints([1, 1]))], self.act, [1, c, 1, 1],
                         "x = nn.functional.adaptive_avg_pool2d(x, (1, 1))", "function.adaptive_avg_pool2d")

    def view(self, x, sizes):
        target = "view" if self.decomposed else "reshape"
        return self.p.op("aten.%s.default" % target, target, [("self", t(x)), ("size" if self.decomposed else "shape", ints(sizes))],
                         self.act, sizes, "x = x.reshape(%s)" % ", ".join(map(str, sizes)),
                         "method_descriptor.reshape")

    def transpose(self, x, d0, d1, sizes):
        out = list(sizes)
        out[d0], out[d1] = out[d1], out[d0]
        if self.decomposed:
            dims = list(range(len(sizes)))
            dims[d0], dims[d1] = dims[d1], dims[d0]
            return self.p.op("aten.permute.default", "permute", [("self", t(x)), ("dims", ints(dims))],
                             self.act, out, "x = x.transpose(%d, %d)" % (d0, d1), "method_descriptor.transpose")
        return self.p.op("aten.transpose.int", "transpose", [("self", t(x)), ("dim0", i(d0)), ("dim1", i(d1))],
                         self.act, out, "x = x.transpose(%d, %d)" % (d0, d1), "method_descriptor.transpose")

    def slice(self, x, dim, start, end, sizes):
        out = list(sizes)
        out[dim] = end - start
        return self.p.op("aten.slice.Tensor", "slice",
                         [("self", t(x)), ("dim", i(dim)), ("start", i(start)), ("end", i(end))],
                         self.act, out, "x1 = x[..., :x.shape[-1] // 2]", "wrapper_descriptor.__getitem__")


# ----------------------------------------------------------------------------
# Families
# ----------------------------------------------------------------------------

def mlp(args):
    """2 nodes per layer (3 with int8)."""
    width, batch = args.hidden or 256, 1
    per_layer = 3 if args.dtype == "int8" else 2
    layers = args.layers or max(1, args.nodes // per_layer)
    p = Program("__main__.MLP", ["x"])
    L = Layers(p, args.dtype, args.decomposed)
    x = p.user_input("x", L.act, [batch, width])
    for k in range(layers):
        x = L.linear("layers.%d" % k, x, width, width, [batch, width])
        with Scope(p, "act%d" % k, "torch.nn.modules.activation.ReLU"):
            x = L.unary("relu", x, [batch, width])
    p.outputs.append(x)
    return p


def convnet(args):
    """MobileNet-v2-like; about 10 nodes per inverted residual block."""
    width = args.hidden or 16
    expand = 4
    blocks = args.layers or max(1, (args.nodes - 8) // 10)
    p = Program("__main__.MobileNetLike", ["x"])
    L = Layers(p, args.dtype, args.decomposed)
    x = p.user_input("x", L.act, [1, 3, 32, 32])
    with Scope(p, "features.0", "torch.nn.modules.container.Sequential"):
        x, hw = L.conv("features.0.0", x, 3, width, 3, 2, [32, 32])
        x = L.batch_norm("features.0.1", x, width, [1, width] + hw)
        x = L.unary("hardtanh", x, [1, width] + hw, [("min_val", flt(0.0)), ("max_val", flt(6.0))], True)
    hidden = width * expand
    for b in range(blocks):
        base = "features.%d.conv" % (b + 1)
        with Scope(p, "features.%d" % (b + 1), "torchvision.models.mobilenetv2.InvertedResidual"):
            inp = x
            y, _ = L.conv(base + ".0.0", x, width, hidden, 1, 1, hw)
            y = L.batch_norm(base + ".0.1", y, hidden, [1, hidden] + hw)
            y = L.unary("hardtanh", y, [1, hidden] + hw, [("min_val", flt(0.0)), ("max_val", flt(6.0))], True)
            y, _ = L.conv(base + ".1.0", y, hidden, hidden, 3, 1, hw, groups=hidden)
            y = L.batch_norm(base + ".1.1", y, hidden, [1, hidden] + hw)
            y = L.unary("hardtanh", y, [1, hidden] + hw, [("min_val", flt(0.0)), ("max_val", flt(6.0))], True)
            y, _ = L.conv(base + ".2", y, hidden, width, 1, 1, hw)
            y = L.batch_norm(base + ".3", y, width, [1, width] + hw)
            x = L.binary("add", inp, y, [1, width] + hw)
    x = L.global_pool(x, width)
    x = p.op("aten.flatten.using_ints", "flatten", [("self", t(x)), ("start_dim", i(1))], L.act,
             [1, width], "x = torch.flatten(x, 1)", "builtin_function_or_method.flatten")
    x = L.linear("classifier.1", x, width, 10, [1, 10])
    p.outputs.append(x)
    return p


def resnet(args):
    """ResNet-like; 7 nodes per basic block."""
    width = args.hidden or 16
    blocks = args.layers or max(1, (args.nodes - 8) // 7)
    p = Program("__main__.ResNetLike", ["x"])
    L = Layers(p, args.dtype, args.decomposed)
    x = p.user_input("x", L.act, [1, 3, 64, 64])
    x, hw = L.conv("conv1", x, 3, width, 7, 2, [64, 64])
    x = L.batch_norm("bn1", x, width, [1, width] + hw)
    x = L.unary("relu", x, [1, width] + hw, inplace=True)
    if not args.decomposed:
        hw = [hw[0] // 2, hw[1] // 2]
        with Scope(p, "maxpool", "torch.nn.modules.pooling.MaxPool2d"):
            x = p.op("aten.max_pool2d.default", "max_pool2d",
                     [("self", t(x)), ("kernel_size", ints([3, 3])), ("stride", ints([2, 2])),
                      ("padding", ints([1, 1]))], L.act, [1, width] + hw,
                     "return F.max_pool2d(input, self.kernel_size, self.stride,", "function.max_pool2d")
    else:  # max_pool2d has no decomposition yet: downsample with a strided conv
        x, hw = L.conv("maxpool", x, width, width, 3, 2, hw)
    for b in range(blocks):
        fqn = "layer%d.%d" % (b // 2 + 1, b % 2)
        with Scope(p, fqn, "torchvision.models.resnet.BasicBlock"):
            identity = x
            y, _ = L.conv(fqn + ".conv1", x, width, width, 3, 1, hw)
            y = L.batch_norm(fqn + ".bn1", y, width, [1, width] + hw)
            y = L.unary("relu", y, [1, width] + hw, inplace=True)
            y, _ = L.conv(fqn + ".conv2", y, width, width, 3, 1, hw)
            y = L.batch_norm(fqn + ".bn2", y, width, [1, width] + hw)
            y = L.binary("add", y, identity, [1, width] + hw, inplace=True)
            x = L.unary("relu", y, [1, width] + hw, inplace=True)
    x = L.global_pool(x, width)
    x = p.op("aten.flatten.using_ints", "flatten", [("self", t(x)), ("start_dim", i(1))], L.act,
             [1, width], "x = torch.flatten(x, 1)", "builtin_function_or_method.flatten")
    x = L.linear("fc", x, width, 10, [1, 10])
    p.outputs.append(x)
    return p


def llama(args):
    """Llama-like decoder: tokens [1, seq] at input_pos, KV caches [1, heads, max_seq, head_dim]."""
    hidden = args.hidden or 64
    heads = args.heads or 4
    head_dim = hidden // heads
    vocab = args.vocab or 256
    seq, max_seq = args.seq, args.max_seq
    ffn = args.ffn or (hidden * 8 // 3 + 7) // 8 * 8
    per_layer = 63 if args.decomposed else 43
    layers = args.layers or max(1, (args.nodes - 8) // per_layer)
    p = Program("__main__.Transformer", ["tokens", "input_pos"])
    L = Layers(p, args.dtype, args.decomposed)
    act = L.act
    D = args.decomposed
    emb = p.parameter("tok_embeddings.weight", act, [vocab, hidden])
    caches = []
    for k in range(layers):
        caches.append((p.buffer("layers.%d.attention.kv_cache.k_cache" % k, act, [1, heads, max_seq, head_dim]),
                       p.buffer("layers.%d.attention.kv_cache.v_cache" % k, act, [1, heads, max_seq, head_dim])))
    # Rotary tables and the causal mask are buffers, as in ExecuTorch's llama_transformer.
    cos = p.buffer("freqs_cos", act, [seq, head_dim])
    sin = p.buffer("freqs_sin", act, [seq, head_dim])
    mask = p.buffer("mask", act, [seq, max_seq])
    tokens = p.user_input("tokens", "int64", [1, seq])
    pos = p.user_input("input_pos", "int64", [seq])
    HS = [1, seq, hidden]
    x = p.op("aten.embedding.default", "embedding", [("weight", t(emb)), ("indices", t(tokens))], act, HS,
             "h = self.tok_embeddings(tokens)", "function.embedding")

    def rms_norm(fqn, x):
        w = L.vector(fqn + ".weight", hidden)
        with Scope(p, fqn, "torch.nn.modules.normalization.RMSNorm"):
            if not D:
                return p.op("aten.rms_norm.default", "rms_norm",
                            [("input", t(x)), ("normalized_shape", ints([hidden])), ("weight", t(w)),
                             ("eps", flt(1e-5))], act, HS, "return F.rms_norm(x, self.normalized_shape,",
                            "function.rms_norm")
            sq = p.op("aten.pow.Tensor_Scalar", "pow", [("self", t(x)), ("exponent", i(2))], act, HS,
                      "x.pow(2)", "method_descriptor.pow")
            m = p.op("aten.mean.dim", "mean", [("self", t(sq)), ("dim", ints([-1])), ("keepdim", {"as_bool": True})],
                     act, [1, seq, 1], "x.pow(2).mean(-1, keepdim=True)", "method_descriptor.mean")
            e = L.binary("add", m, 1e-5, [1, seq, 1], scalar=True)
            r = p.op("aten.rsqrt.default", "rsqrt", [("self", t(e))], act, [1, seq, 1],
                     "torch.rsqrt(...)", "builtin_function_or_method.rsqrt")
            n = L.binary("mul", x, r, HS)
            return L.binary("mul", n, w, HS)

    def rotary(x, sizes):  # x: [1, seq, heads, head_dim] (HF rotate_half form)
        c = L.view(cos, [1, seq, 1, head_dim])
        s = L.view(sin, [1, seq, 1, head_dim])
        half = head_dim // 2
        x1 = L.slice(x, 3, 0, half, sizes)
        x2 = L.slice(x, 3, half, head_dim, sizes)
        hs = sizes[:3] + [half]
        n2 = p.op("aten.neg.default", "neg", [("self", t(x2))], act, hs, "-x2", "builtin_function_or_method.neg")
        rot = p.op("aten.cat.default", "cat", [("tensors", {"as_tensors": [{"name": n2}, {"name": x1}]}),
                                               ("dim", i(-1))], act, sizes, "torch.cat((-x2, x1), dim=-1)",
                   "builtin_function_or_method.cat")
        a = L.binary("mul", x, c, sizes)
        b = L.binary("mul", rot, s, sizes)
        return L.binary("add", a, b, sizes)

    for k in range(layers):
        fqn = "layers.%d" % k
        with Scope(p, fqn, "__main__.TransformerBlock"):
            h = rms_norm(fqn + ".attention_norm", x)
            with Scope(p, fqn + ".attention", "__main__.Attention"):
                Q4 = [1, seq, heads, head_dim]
                q = L.view(L.linear(fqn + ".attention.wq", h, hidden, hidden, HS, bias=False), Q4)
                kk = L.view(L.linear(fqn + ".attention.wk", h, hidden, hidden, HS, bias=False), Q4)
                v = L.view(L.linear(fqn + ".attention.wv", h, hidden, hidden, HS, bias=False), Q4)
                q, kk = rotary(q, Q4), rotary(kk, Q4)
                T4 = [1, heads, seq, head_dim]
                q = L.transpose(q, 1, 2, Q4)
                kk = L.transpose(kk, 1, 2, Q4)
                v = L.transpose(v, 1, 2, Q4)
                C4 = [1, heads, max_seq, head_dim]
                kc, vc = caches[k]
                for cache, new, which in ((kc, kk, "k_cache"), (vc, v, "v_cache")):
                    with Scope(p, fqn + ".attention.kv_cache", "__main__.KVCache"):
                        if D:
                            upd = p.op("aten.index_put.default", "index_put",
                                       [("self", t(cache)),
                                        ("indices", {"as_optional_tensors": [{"as_none": True}, {"as_none": True},
                                                                             {"as_tensor": {"name": pos}}]}),
                                        ("values", t(new))], act, C4,
                                       "self.%s[:, :, input_pos] = %s_val" % (which, which[0]),
                                       "wrapper_descriptor.__setitem__")
                            p.mutations.append(("%s.attention.kv_cache.%s" % (fqn, which), upd))
                        else:
                            upd = p.op("aten.index_copy_.default", "index_copy_",
                                       [("self", t(cache)), ("dim", i(2)), ("index", t(pos)), ("source", t(new))],
                                       act, C4, "self.%s.index_copy_(2, input_pos, %s_val)" % (which, which[0]),
                                       "method_descriptor.index_copy_")
                    if which == "k_cache":
                        keys = upd
                    else:
                        values = upd
                m = L.slice(mask, 0, 0, seq, [seq, max_seq]) if not D else mask
                if not D:
                    y = p.op("aten.scaled_dot_product_attention.default", "scaled_dot_product_attention",
                             [("query", t(q)), ("key", t(keys)), ("value", t(values)), ("attn_mask", t(m))],
                             act, T4, "y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)",
                             "builtin_function_or_method.scaled_dot_product_attention")
                else:
                    kt = p.op("aten.permute.default", "permute", [("self", t(keys)), ("dims", ints([0, 1, 3, 2]))],
                              act, [1, heads, head_dim, max_seq], "k.transpose(-2, -1)", "method_descriptor.transpose")
                    sc = p.op("aten.bmm.default", "bmm", [("self", t(L.view(q, [heads, seq, head_dim]))),
                                                          ("mat2", t(L.view(kt, [heads, head_dim, max_seq])))],
                              act, [heads, seq, max_seq], "q @ k.transpose(-2, -1)", "builtin_function_or_method.bmm")
                    sc = L.view(sc, [1, heads, seq, max_seq])
                    sc = L.binary("mul", sc, 1.0 / head_dim ** 0.5, [1, heads, seq, max_seq], scalar=True)
                    sc = L.binary("add", sc, m, [1, heads, seq, max_seq])
                    pr = p.op("aten.softmax.int", "softmax", [("self", t(sc)), ("dim", i(-1))], act,
                              [1, heads, seq, max_seq], "scores.softmax(-1)", "method_descriptor.softmax")
                    y = p.op("aten.bmm.default", "bmm", [("self", t(L.view(pr, [heads, seq, max_seq]))),
                                                         ("mat2", t(L.view(values, [heads, max_seq, head_dim])))],
                             act, [heads, seq, head_dim], "scores @ v", "builtin_function_or_method.bmm")
                    y = L.view(y, T4)
                y = L.transpose(y, 1, 2, T4)
                y = L.view(y, HS)
                y = L.linear(fqn + ".attention.wo", y, hidden, hidden, HS, bias=False)
            x = L.binary("add", x, y, HS)
            h = rms_norm(fqn + ".ffn_norm", x)
            with Scope(p, fqn + ".feed_forward", "__main__.FeedForward"):
                FS = [1, seq, ffn]
                g = L.linear(fqn + ".feed_forward.w1", h, hidden, ffn, FS, bias=False)
                g = p.op("aten.silu.default", "silu", [("self", t(g))], act, FS, "F.silu(self.w1(x))",
                         "function.silu")
                u = L.linear(fqn + ".feed_forward.w3", h, hidden, ffn, FS, bias=False)
                g = L.binary("mul", g, u, FS)
                y = L.linear(fqn + ".feed_forward.w2", g, ffn, hidden, HS, bias=False)
            x = L.binary("add", x, y, HS)
    x = rms_norm("norm", x)
    x = L.linear("output", x, hidden, vocab, [1, seq, vocab], bias=False)
    p.outputs.append(x)
    return p


FAMILIES = {"mlp": mlp, "convnet": convnet, "resnet": resnet, "llama": llama}


# ----------------------------------------------------------------------------
# Weights and the streaming PT2 archive
# ----------------------------------------------------------------------------

class Weights:
    """Deterministic tensor bytes: a seeded block of values read from a per-tensor offset."""

    BLOCK = 1 << 16

    def __init__(self, mode, seed=0):
        self.mode = mode
        rng = random.Random(seed)
        n = self.BLOCK // 4
        self.blocks = {
            "fp32": struct.pack("<%df" % n, *[rng.uniform(-0.1, 0.1) for _ in range(n)]) * 2,
            "fp16": struct.pack("<%de" % (2 * n), *[rng.uniform(-0.1, 0.1) for _ in range(2 * n)]) * 2,
            "int8": rng.randbytes(self.BLOCK) * 2,
            "int64": bytes(2 * self.BLOCK),
        }

    def chunks(self, index, dtype, nbytes):
        """Yields (bytes or None for a hole of that many bytes) covering nbytes."""
        block = self.blocks[dtype]
        start = (index * 4099 * 8) % self.BLOCK
        if self.mode == "sparse":
            tag = struct.pack("<Q", index + 1) * 8
            head = min(nbytes, len(tag))
            yield tag[:head]
            if nbytes > head:
                yield nbytes - head
            return
        # The first bytes carry the tensor's index, so no two tensors are equal
        # (a deduplicating emitter must still copy every tensor).
        tag = struct.pack("<Q", index + 1)
        done = 0
        while done < nbytes:
            n = min(self.BLOCK, nbytes - done)
            chunk = block[start:start + n]
            if done == 0:
                chunk = tag[:n] + chunk[len(tag):]
            yield chunk
            done += n


ZERO_CHUNK = bytes(1 << 20)


class StreamingZip:
    """STORED zip in PyTorchFileWriter's layout, written as a stream (ZIP64 when needed).

    Local headers: version 0 (45 with ZIP64), flags 0x0808, zero CRC and sizes, an
    "FB" extra field padding the data to 64 bytes; a data descriptor after each
    member; the central directory holds the real CRC, sizes and offsets.
    """

    ALIGN = 64

    def __init__(self, path):
        self.f = open(path, "wb")
        self.pos = 0
        self.entries = []

    def _write(self, data):
        self.f.write(data)
        self.pos += len(data)

    def add(self, name, chunks):
        """chunks: iterable of bytes, or ints meaning that many zero bytes (a hole)."""
        name_bytes = name.encode("utf-8")
        offset = self.pos
        start = offset + 30 + len(name_bytes) + 4
        pad = (-start) % self.ALIGN
        extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        self._write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, 0x0808, 0, 0, 0, 0, 0, 0,
                                len(name_bytes), len(extra)) + name_bytes + extra)
        crc, size = 0, 0
        for chunk in chunks:
            if isinstance(chunk, int):
                left = chunk
                while left:
                    n = min(left, len(ZERO_CHUNK))
                    crc = zlib.crc32(ZERO_CHUNK[:n] if n < len(ZERO_CHUNK) else ZERO_CHUNK, crc)
                    left -= n
                self.f.seek(chunk, os.SEEK_CUR)
                self.pos += chunk
                size += chunk
            else:
                crc = zlib.crc32(chunk, crc)
                self._write(chunk)
                size += len(chunk)
        if size >= 0xFFFFFFFF:
            self._write(struct.pack("<IIQQ", 0x08074B50, crc, size, size))
        else:
            self._write(struct.pack("<IIII", 0x08074B50, crc, size, size))
        self.entries.append((name_bytes, crc, size, offset))

    def finish(self):
        cd_start = self.pos
        for name_bytes, crc, size, offset in self.entries:
            big = size >= 0xFFFFFFFF or offset >= 0xFFFFFFFF
            extra = b""
            if big:
                extra = struct.pack("<HHQQQ", 1, 24, size, size, offset)
            self._write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45 if big else 0, 45 if big else 0,
                                    0x0808, 0, 0, 0, crc, 0xFFFFFFFF if big else size,
                                    0xFFFFFFFF if big else size, len(name_bytes), len(extra), 0, 0, 0, 0,
                                    0xFFFFFFFF if big else offset) + name_bytes + extra)
        cd_size = self.pos - cd_start
        count = len(self.entries)
        if cd_start >= 0xFFFFFFFF or count >= 0xFFFF:
            eocd64 = self.pos
            self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, cd_size, cd_start))
            self._write(struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1))
            self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(count, 0xFFFF), min(count, 0xFFFF),
                                    min(cd_size, 0xFFFFFFFF), 0xFFFFFFFF, 0))
        else:
            self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, cd_size, cd_start, 0))
        self.f.truncate(self.pos)
        self.f.close()


def write_pt2(path, stem, program, text, weights):
    z = StreamingZip(path)
    root = stem + "/"
    config = {}
    values = program["graph_module"]["graph"]["tensor_values"]
    for index, (fqn, name, dtype, sizes, is_param) in enumerate(weights.payloads):
        path_name = "weight_%d" % index
        nbytes = numel(sizes) * DTYPES[dtype][1]
        z.add(root + "data/weights/" + path_name, weights.source.chunks(index, dtype, nbytes))
        config[fqn] = {"path_name": path_name, "is_param": is_param, "use_pickle": False,
                       "tensor_meta": values[name]}
    z.add(root + "data/weights/model_weights_config.json", [dump_json({"config": config}).encode()])
    z.add(root + "data/constants/model_constants_config.json", [b'{"config": {}}'])
    z.add(root + "models/model.json", [text.encode()])
    z.add(root + "archive_format", [b"pt2"])
    z.add(root + "archive_version", [b"0"])
    z.add(root + ".data/version", [b"6\n"])
    z.add(root + "byteorder", [b"little"])
    z.add(root + ".data/serialization_id", [b"%040d" % (zlib.crc32(text.encode()) * 7919)])
    z.finish()


class Payloads:
    def __init__(self, payloads, source):
        self.payloads, self.source = payloads, source


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("family", choices=sorted(FAMILIES))
    ap.add_argument("-o", "--output", help="PT2 archive to write")
    ap.add_argument("--json", help="also (or only) write the program JSON here")
    ap.add_argument("--nodes", type=int, default=1000, help="approximate node count (sets --layers)")
    ap.add_argument("--layers", type=int, help="layers / blocks (overrides --nodes)")
    ap.add_argument("--hidden", type=int, help="width: MLP features, conv channels, model dim")
    ap.add_argument("--heads", type=int)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--ffn", type=int, help="llama feed-forward width (default 8/3 hidden)")
    ap.add_argument("--seq", type=int, default=1, help="llama tokens per call")
    ap.add_argument("--max-seq", type=int, default=128, help="llama KV cache length")
    ap.add_argument("--dtype", choices=["fp32", "fp16", "int8"], default="fp32")
    ap.add_argument("--decomposed", action="store_true", help="only ops the toolchain lowers today")
    ap.add_argument("--weights", choices=["random", "sparse", "auto"], default="auto",
                    help="tensor bytes (auto: sparse above 64 MiB in total)")
    ap.add_argument("--stats", action="store_true", help="print nodes and weight bytes on stdout")
    args = ap.parse_args(argv)
    if not args.output and not args.json:
        ap.error("give -o OUT.pt2 and/or --json OUT.json")
    p = FAMILIES[args.family](args)
    program = p.build()
    text = dump_json(program)
    weight_bytes = sum(numel(s) * DTYPES[d][1] for _, _, d, s, _ in p.payloads)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    if args.output:
        mode = args.weights
        if mode == "auto":
            mode = "sparse" if weight_bytes > 64 << 20 else "random"
        stem = os.path.splitext(os.path.basename(args.output))[0]
        write_pt2(args.output, stem, program, text, Payloads(p.payloads, Weights(mode)))
    if args.stats:
        print(json.dumps({"nodes": len(p.nodes), "weight_bytes": weight_bytes, "tensors": len(p.payloads),
                          "json_bytes": len(text)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
