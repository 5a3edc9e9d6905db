#!/usr/bin/env python3
"""Generates edge_ops/edge.yaml, the project's edge-dialect dtype rules.

The op list comes from lib/Ops/operators.txt (the operator table); the allowed
dtype combinations come from the compact rules in RULES below, which follow
PyTorch's type-promotion semantics per op family. The output uses the edge.yaml
DSL of ExecuTorch (func / namespace / inherits / type_alias / type_constraint).

Usage:
  scripts/gen_edge_yaml.py                     # rewrite edge_ops/edge.yaml
  scripts/gen_edge_yaml.py --check             # fail if the file is stale
  scripts/gen_edge_yaml.py --compare UPSTREAM  # report combinations UPSTREAM
                                               # accepts that ours rejects

For the ops ExecuTorch's own edge.yaml lists (--upstream, default
../shared/upstream/edge.yaml), the family rules are restricted to the
combinations that file accepts, so the default verdict on those ops is
upstream's (our families are wider: complex, Bool, UInt16, any-dtype outputs).
"""

import argparse
import itertools
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "lib", "Ops", "operators.txt")
OUTPUT = os.path.join(ROOT, "edge_ops", "edge.yaml")
UPSTREAM = os.path.join(ROOT, "..", "shared", "upstream", "edge.yaml")

# ---------------------------------------------------------------------------
# Dtypes and promotion
# ---------------------------------------------------------------------------

BOOL = ["Bool"]
INTS = ["Byte", "Char", "Short", "Int", "Long", "UInt16"]
FLOATS = ["Half", "BFloat16", "Float", "Double"]
COMPLEX = ["ComplexFloat", "ComplexDouble"]
REAL = BOOL + INTS + FLOATS
ALL = REAL + COMPLEX
INDEX = ["Int", "Long"]
# Canonical order used when printing alias lists.
ORDER = ["Bool", "Byte", "Char", "Short", "Int", "Long", "UInt16", "Half", "BFloat16",
         "Float", "Double", "ComplexFloat", "ComplexDouble"]

INT_INFO = {"Byte": (False, 8), "Char": (True, 8), "Short": (True, 16), "Int": (True, 32),
            "Long": (True, 64), "UInt16": (False, 16)}
SIGNED_BY_BITS = {8: "Char", 16: "Short", 32: "Int", 64: "Long"}


def promote(a, b):
    """torch.promote_types for the edge dtypes."""
    if a == b:
        return a
    if a == "Bool":
        return b
    if b == "Bool":
        return a
    if a in COMPLEX or b in COMPLEX:
        if "ComplexDouble" in (a, b) or "Double" in (a, b):
            return "ComplexDouble"
        return "ComplexFloat"
    if a in FLOATS and b in FLOATS:
        if {a, b} == {"Half", "BFloat16"}:
            return "Float"
        return max(a, b, key=FLOATS.index)
    if a in FLOATS:
        return a
    if b in FLOATS:
        return b
    (sa, ba), (sb, bb) = INT_INFO[a], INT_INFO[b]
    if sa == sb:
        return a if ba >= bb else b
    signed, sbits, ubits = (a, ba, bb) if sa else (b, bb, ba)
    if sbits > ubits:
        return signed
    return SIGNED_BY_BITS[min(64, ubits * 2)]


def to_float(t):
    """Result dtype of ops that always produce floating output (true division, sqrt)."""
    return t if t in FLOATS or t in COMPLEX else "Float"


# ---------------------------------------------------------------------------
# Schema reading (just enough of the grammar for names and tensor-ness)
# ---------------------------------------------------------------------------

def split_top(text):
    parts, depth, cur = [], 0, ""
    for c in text:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    return parts


TYPE_RE = re.compile(r"^(\w+)(\([^)]*\))?(\?)?(\[\d*\])?(\([^)]*\))?(\?)?")


def parse_type(text):
    m = TYPE_RE.match(text)
    base, _, elem_opt, lst, _, opt = m.groups()
    if lst is None and elem_opt:
        opt, elem_opt = elem_opt, None
    rest = text[m.end():].strip()
    return {"base": base, "list": lst is not None, "elem_opt": bool(elem_opt) and lst is not None,
            "optional": bool(opt)}, rest


class Op:
    def __init__(self, ns, schema):
        head, rets = schema.rsplit("->", 1)
        name, args = head.split("(", 1)
        args = args.rstrip().rstrip(")")
        if "::" in name:
            ns, name = name.split("::")
        self.ns = ns
        self.name, _, self.overload = name.strip().partition(".")
        self.args = []
        kw = False
        for a in split_top(args):
            if a == "*":
                kw = True
                continue
            t, rest = parse_type(a)
            argname = rest.split("=")[0].strip()
            t["kw"] = kw
            t["write"] = "!" in a.split(" ")[0]
            t["name"] = argname
            self.args.append(t)
        rets = rets.strip()
        if rets.startswith("("):
            rets = rets[1:-1]
        self.returns = []
        k = 0
        for r in split_top(rets):
            t, rest = parse_type(r)
            if t["base"] == "Tensor":
                t["key"] = rest if rest else "__ret_%d" % k
                k += 1
                self.returns.append(t)

    @property
    def qualified(self):
        q = "%s::%s" % (self.ns, self.name)
        return q + ("." + self.overload if self.overload and self.overload != "default" else "")

    @property
    def is_out(self):
        return any(a["kw"] and a["write"] for a in self.args)

    def tensor_args(self):
        return [a["name"] for a in self.args
                if a["base"] == "Tensor" and not a["elem_opt"] and not (a["kw"] and a["write"])]

    def out_args(self):
        return [a["name"] for a in self.args if a["kw"] and a["write"]]

    def ret_keys(self):
        return [r["key"] for r in self.returns]


def read_table():
    ops, ns = [], "aten"
    for line in open(TABLE):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("namespace "):
            ns = line.split()[1]
            continue
        while line.startswith("@"):
            line = line.split(None, 1)[1]
        ops.append(Op(ns, line))
    return ops


# ---------------------------------------------------------------------------
# Rules. A rule maps an op's tensor keys to rows; a row maps each key to either
# a list of dtypes (its own alias) or ("same", other_key) (unified alias).
# ---------------------------------------------------------------------------

def same_all(keys, dtypes):
    """Every tensor io has one dtype from `dtypes`."""
    return [{k: (dtypes if i == 0 else ("same", keys[0])) for i, k in enumerate(keys)}]


def rule_same(dtypes):
    return lambda op: same_all(op.tensor_args() + op.ret_keys(), dtypes)


def rule_unary_float(op):
    """Floating-point math: integral inputs give Float, floating inputs keep their dtype."""
    (x,), (r,) = op.tensor_args(), op.ret_keys()
    return [{x: BOOL + INTS, r: ["Float"]}, {x: FLOATS + COMPLEX, r: ("same", x)}]


def rule_unary_float_only(dtypes=FLOATS):
    """Ops defined on floating inputs only; output follows the input."""
    return rule_same(dtypes)


def rule_predicate(op):
    """isnan / isinf / logical_not / nonzero-like: any input, fixed output family."""
    (x,), (r,) = op.tensor_args(), op.ret_keys()
    return [{x: ALL, r: REAL}]


def rule_promote(result=lambda t: t, dtypes=ALL):
    """Binary op with torch type promotion; `result` maps the promoted dtype."""
    def rows(op):
        a, b = op.tensor_args()[:2]
        (r,) = op.ret_keys()
        by_result = {}
        for x in dtypes:
            for y in dtypes:
                by_result.setdefault(result(promote(x, y)), []).append((x, y))
        out = []
        for res, pairs in sorted(by_result.items(), key=lambda kv: ORDER.index(kv[0])):
            # Group the pairs by the set of second operands to keep rows compact.
            by_x = {}
            for x, y in pairs:
                by_x.setdefault(x, []).append(y)
            by_ys = {}
            for x, ys in by_x.items():
                by_ys.setdefault(tuple(sorted(ys, key=ORDER.index)), []).append(x)
            for ys, xs in by_ys.items():
                out.append({a: sorted(xs, key=ORDER.index), b: list(ys), r: [res]})
        # Half and BFloat16 are interchangeable 16-bit floats for the portable
        # kernels: a mix of the two may produce either.
        if "Half" in dtypes and "BFloat16" in dtypes:
            half = ["Half", "BFloat16"]
            out.append({a: half, b: half, r: ("same", a)})
            out.append({a: half, b: half, r: ("same", b)})
        return out
    return rows


def rule_compare(op):
    """Comparisons and logical ops: any pair of inputs, Bool output (or any, for out=)."""
    keys = op.tensor_args()
    (r,) = op.ret_keys()
    return [dict({k: ALL for k in keys}, **{r: REAL})]


def rule_scalar_arith(op):
    """Tensor-Scalar arithmetic: the output keeps the tensor's dtype, or is the
    promoted dtype of a floating / integral scalar (Float, Long)."""
    x = op.tensor_args()[0]
    (r,) = op.ret_keys()
    return [{x: ALL, r: ("same", x)}, {x: BOOL + INTS, r: ["Float"]}, {x: BOOL, r: ["Long"]}]


def rule_scalar_float(op):
    """Tensor-Scalar true division: floating output."""
    x = op.tensor_args()[0]
    (r,) = op.ret_keys()
    return [{x: BOOL + INTS, r: ["Float"]}, {x: FLOATS + COMPLEX, r: ("same", x)},
            {x: BOOL + INTS, r: ["Double"]}]


def rule_scalar_compare(op):
    x = op.tensor_args()[0]
    (r,) = op.ret_keys()
    return [{x: ALL, r: REAL}]


def rule_bitwise_tensor(op):
    return rule_promote(dtypes=BOOL + INTS)(op)


def rule_bitwise_scalar(op):
    x = op.tensor_args()[0]
    (r,) = op.ret_keys()
    return [{x: BOOL + INTS, r: ("same", x)}, {x: BOOL, r: ["Long"]}]


def rule_any_to_any(op):
    """Conversions (_to_copy, copy, fill.Tensor): any input dtype, any output dtype."""
    return [{k: ALL for k in op.tensor_args() + op.ret_keys()}]


def rule_factory(op):
    """Factories: the output dtype comes from `dtype`; tensor inputs are free."""
    return [{k: ALL for k in op.tensor_args() + op.ret_keys()}]


def rule_reduce_with_dtype(op):
    """sum / mean / cumsum / prod: the output follows the input, or the requested dtype."""
    x = op.tensor_args()[0]
    (r,) = op.ret_keys()
    return [{x: ALL, r: ("same", x)}, {x: BOOL + INTS, r: ["Long"]}, {x: ALL, r: ALL}]


def rule_index_out(index_keys, index_dtypes=INDEX, value_dtypes=ALL):
    """Gather-like ops: data keys share a dtype, index keys are integral."""
    def rows(op):
        data = [k for k in op.tensor_args() + op.ret_keys() if k not in index_keys]
        row = {k: (value_dtypes if i == 0 else ("same", data[0])) for i, k in enumerate(data)}
        for k in op.tensor_args():
            if k in index_keys:
                row[k] = index_dtypes
        return [row]
    return rows


def rule_arg_reduce(op):
    """argmax / argmin: any real input, Long indices."""
    (x,), (r,) = op.tensor_args(), op.ret_keys()
    return [{x: REAL, r: ["Long"]}]


def rule_values_indices(op):
    """max.dim / min.dim / sort / topk / max_pool with indices."""
    x = op.tensor_args()[0]
    v, i = op.ret_keys()
    return [{x: REAL, v: ("same", x), i: ["Long"]}]


def rule_where(op):
    cond, a, b = op.tensor_args()
    (r,) = op.ret_keys()
    rows = rule_promote()(_Fake([a, b], [r]))
    for row in rows:
        row[cond] = ["Bool", "Byte"]
    return rows


def rule_masked(op):
    x, mask = op.tensor_args()[:2]
    extra = op.tensor_args()[2:]
    (r,) = op.ret_keys()
    row = {x: ALL, mask: ["Bool"], r: ("same", x)}
    for k in extra:
        row[k] = ALL
    return [row]


def rule_norm(op):
    """Normalizations: floating data; statistics outputs follow or are Float."""
    keys = op.tensor_args() + op.ret_keys()
    first = keys[0]
    return [{k: (FLOATS if k == first else ("same", first)) for k in keys},
            dict({k: (FLOATS if k == first else ("same", first)) for k in keys},
                 **{k: ["Float"] for k in op.ret_keys()[1:]})]


def rule_quantize(op):
    """quantize_*: floating input (and qparams), integral output."""
    args = op.tensor_args()
    (r,) = op.ret_keys()
    row = {args[0]: FLOATS}
    for k in args[1:]:
        row[k] = FLOATS + INDEX
    row[r] = ["Byte", "Char", "Short", "Int", "UInt16"]
    return [row]


def rule_dequantize(op):
    args = op.tensor_args()
    (r,) = op.ret_keys()
    row = {args[0]: ["Byte", "Char", "Short", "Int", "UInt16"]}
    for k in args[1:]:
        row[k] = FLOATS + INDEX
    row[r] = FLOATS
    return [row]


def rule_choose_qparams(op):
    keys = op.tensor_args()
    s, z = op.ret_keys()
    return [dict({k: FLOATS for k in keys}, **{s: ["Float", "Double"], z: INDEX + ["Byte", "Char"]})]


def rule_embedding_byte(op):
    w, scales = op.tensor_args()[:2]
    rest = op.tensor_args()[2:]
    (r,) = op.ret_keys()
    row = {w: ["Byte", "Char"], scales: FLOATS, r: FLOATS}
    for k in rest:
        row[k] = INDEX if k == "indices" else FLOATS + INDEX
    return [row]


def rule_quantized_add(op):
    a, b = op.tensor_args()
    (r,) = op.ret_keys()
    q = ["Byte", "Char"]
    return [{a: q, b: ("same", a), r: ("same", a)}]


def rule_conv(op):
    """Convolution: input, weight and output share a dtype; the bias is free."""
    args = op.tensor_args()
    (r,) = op.ret_keys()
    first = args[0]
    row = {first: INTS + FLOATS, r: ("same", first)}
    for k in args[1:]:
        row[k] = ALL if k == "bias" else ("same", first)
    return [row]


def rule_scatter_src(op):
    """select_scatter / slice_scatter: the output follows self; src is converted."""
    x, src = op.tensor_args()
    (r,) = op.ret_keys()
    return [{x: ALL, src: ALL, r: ("same", x)}]


class _Fake:
    def __init__(self, args, rets):
        self._a, self._r = args, rets

    def tensor_args(self):
        return self._a

    def ret_keys(self):
        return self._r


UNARY_FLOAT = """acos acosh asin asinh atan atanh cos cosh erf exp expm1 log log10 log1p log2
reciprocal rsqrt sigmoid sin sinh sqrt tan tanh logit""".split()
FLOAT_ONLY = """_log_softmax _softmax gelu glu elu leaky_relu
_adaptive_avg_pool2d _adaptive_avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d
_adaptive_avg_pool2d_backward avg_pool2d_backward var.dim var.correction std.dim std.correction _pdist_forward
_cdist_forward silu hardswish hardsigmoid softplus softmax.int log_softmax.int
upsample_bilinear2d.vec upsample_nearest2d.vec upsample_bilinear2d upsample_nearest2d
_upsample_bilinear2d_aa grid_sampler_2d col2im atan2 linalg_vector_norm logsumexp mse_loss
native_dropout dropout scaled_dot_product_attention conv1d conv2d conv3d conv1d.padding
conv2d.padding conv3d.padding conv_transpose1d conv_transpose2d.input conv_transpose3d.input
convolution_backward prelu _prelu_kernel layer_norm group_norm instance_norm batch_norm cross_entropy_loss max_pool1d
max_pool2d""".split()
MATMUL = """mm bmm addmm baddbmm matmul linear""".split()
POOL = """avg_pool1d avg_pool2d avg_pool3d""".split()
SAME_REAL = """hardtanh abs neg relu relu6 ceil floor round trunc sign amax amin clamp_min clamp_max square
tril triu flip roll repeat constant_pad_nd reflection_pad1d reflection_pad2d reflection_pad3d
replication_pad2d replication_pad3d pixel_shuffle pixel_unshuffle max min cumprod""".split()
SAME_ALL = """alias clone contiguous detach lift_fresh t transpose.int squeeze squeeze.dim squeeze.dims
unsqueeze view view.dtype permute expand select.int slice.Tensor diagonal as_strided unfold narrow
split.Tensor split.sizes split_with_sizes unbind.int chunk unflatten.int reshape _unsafe_view
flatten.using_ints cat stack einsum alias_copy as_strided_copy detach_copy diagonal_copy
expand_copy lift_fresh_copy permute_copy select_copy.int slice_copy.Tensor split_copy.Tensor
split_with_sizes_copy squeeze_copy squeeze_copy.dim squeeze_copy.dims t_copy transpose_copy.int
unbind_copy.int unfold_copy unsqueeze_copy view_copy
dim_order_ops::_clone_dim_order resize_ relu_""".split()
ANY_TO_ANY = """_to_copy copy fill.Tensor fill.Scalar to.dtype to.dtype_layout to.device type_as
view_copy.dtype dim_order_ops::_to_dim_order_copy view_as expand_as copy_""".split()
FACTORY = """full full_like zeros zeros_like ones ones_like empty.memory_format empty_strided
empty_like rand rand_like randn randn_like randperm arange arange.start arange.start_step eye
scalar_tensor new_zeros new_ones new_empty new_full dim_order_ops::_empty_dim_order""".split()
PROMOTE = """add.Tensor sub.Tensor mul.Tensor maximum minimum fmod.Tensor remainder.Tensor
floor_divide rsub.Tensor pow.Tensor_Tensor add_.Tensor mul_.Tensor""".split()
PROMOTE_FLOAT = """div.Tensor""".split()
COMPARE = """eq.Tensor ne.Tensor lt.Tensor le.Tensor gt.Tensor ge.Tensor logical_and logical_or
logical_xor""".split()
SCALAR_ARITH = """add.Scalar sub.Scalar mul.Scalar rsub.Scalar fmod.Scalar remainder.Scalar
pow.Tensor_Scalar clamp div.Scalar_mode""".split()
SCALAR_COMPARE = """eq.Scalar ne.Scalar lt.Scalar le.Scalar gt.Scalar ge.Scalar""".split()
BITWISE_TENSOR = """bitwise_and.Tensor bitwise_or.Tensor bitwise_xor.Tensor""".split()
BITWISE_SCALAR = """bitwise_and.Scalar bitwise_or.Scalar bitwise_xor.Scalar bitwise_not""".split()
PREDICATE = """isnan isinf logical_not any any.dim any.dims all.dim nonzero""".split()
REDUCE_DTYPE = """sum sum.dim_IntList mean mean.dim cumsum prod prod.dim_int""".split()
VALUES_INDICES = """max.dim min.dim sort topk max_pool2d_with_indices max_pool3d_with_indices
adaptive_max_pool2d""".split()
NORM = """native_layer_norm native_group_norm native_batch_norm _native_batch_norm_legit
_native_batch_norm_legit.no_stats _native_batch_norm_legit_no_training""".split()
BACKWARD = """native_layer_norm_backward native_group_norm_backward embedding_dense_backward
max_pool2d_with_indices_backward""".split()

RULES = {}


def assign(names, rule):
    for n in names:
        key = n if "::" in n else "aten::" + n
        assert key not in RULES, key
        RULES[key] = rule


assign(UNARY_FLOAT, rule_unary_float)
assign(FLOAT_ONLY, rule_unary_float_only())
assign(SAME_REAL, rule_same(REAL))
assign(MATMUL, rule_same(INTS + FLOATS))
assign(POOL, rule_same(FLOATS + ["Long"]))
assign(["convolution"], rule_conv)
assign(["select_scatter", "slice_scatter"], rule_scatter_src)
assign(SAME_ALL, rule_same(ALL))
assign(ANY_TO_ANY, rule_any_to_any)
assign(FACTORY, rule_factory)
assign(PROMOTE, rule_promote())
assign(PROMOTE_FLOAT, rule_promote(result=to_float))
assign(["div.Tensor_mode"], rule_promote(result=lambda t: t))
assign(["pow.Scalar"], rule_same(ALL))
assign(["div.Scalar"], rule_scalar_float)
assign(COMPARE, rule_compare)
assign(SCALAR_ARITH, rule_scalar_arith)
assign(SCALAR_COMPARE, rule_scalar_compare)
assign(BITWISE_TENSOR, rule_bitwise_tensor)
assign(BITWISE_SCALAR, rule_bitwise_scalar)
assign(PREDICATE, rule_predicate)
assign(REDUCE_DTYPE, rule_reduce_with_dtype)
assign(["argmax", "argmin"], rule_arg_reduce)
assign(VALUES_INDICES, rule_values_indices)
assign(NORM, rule_norm)
assign(BACKWARD, rule_unary_float_only(FLOATS + INDEX))
assign(["where.self"], rule_where)
assign(["masked_fill.Scalar", "masked_fill.Tensor", "masked_scatter"], rule_masked)
assign(["embedding"], rule_index_out({"indices"}))
assign(["index_select", "gather"], rule_index_out({"index"}))
assign(["scatter.src", "scatter.value", "scatter_add", "scatter_reduce.two"], rule_index_out({"index"}))
assign(["index.Tensor", "index_put", "index_put_"], rule_index_out(set()))
assign(["clamp.Tensor"], rule_same(REAL))
assign(["_embedding_bag"], lambda op: [dict({k: FLOATS + INDEX for k in op.tensor_args() + op.ret_keys()})])
assign(["quantize_per_tensor", "dequantize.self"], rule_any_to_any)
assign(["_assert_async.msg", "_assert_tensor_metadata", "sym_size.int", "sym_numel",
        "sym_stride.int", "sym_storage_offset", "_local_scalar_dense"], rule_same(ALL))
assign(["quantized_decomposed::" + n for n in
        ["quantize_per_tensor", "quantize_per_tensor.tensor", "quantize_per_channel", "quantize_per_token"]],
       rule_quantize)
assign(["quantized_decomposed::" + n for n in
        ["dequantize_per_tensor", "dequantize_per_tensor.tensor", "dequantize_per_channel",
         "dequantize_per_token"]], rule_dequantize)
assign(["quantized_decomposed::choose_qparams.tensor",
        "quantized_decomposed::choose_qparams_per_token_asymmetric"], rule_choose_qparams)
assign(["quantized_decomposed::embedding_byte"], rule_embedding_byte)
assign(["quantized_decomposed::add"], rule_quantized_add)
assign(["executorch_prim::et_copy_index.tensor", "executorch_prim::et_view"], rule_same(ALL))

# Training-IR ops that exir-edge functionalizes or decomposes: in-place ops share
# the rules of their functional op.
assign(["index_copy", "index_copy_"], rule_index_out({"index"}))
for _inplace in ["hardtanh_", "hardswish_", "hardsigmoid_", "dropout_", "sigmoid_", "tanh_", "silu_",
                 "gelu_", "clamp_", "add_.Scalar", "sub_.Tensor", "mul_.Scalar", "div_.Tensor", "div_.Scalar",
                 "fill_.Scalar", "sub_.Scalar", "masked_fill_.Scalar", "masked_fill_.Tensor", "clamp_min_",
                 "clamp_max_", "leaky_relu_", "elu_", "exp_", "neg_", "abs_", "sqrt_", "rsqrt_", "floor_", "round_",
                 "log_", "erf_", "scatter_.src", "scatter_.value", "scatter_add_", "fill_.Tensor"]:
    _name, _, _overload = _inplace.partition(".")
    assign([_inplace], RULES["aten::" + _name[:-1] + ("." + _overload if _overload else "")])
# In-place ops whose functional twin has another overload name (OpInfo.cpp's functionalTwin).
assign(["pow_.Scalar"], RULES["aten::pow.Tensor_Scalar"])
assign(["pow_.Tensor"], RULES["aten::pow.Tensor_Tensor"])
assign(["zero", "zero_"], rule_same(ALL))
assign(["diff"], rule_same(ALL))
assign(["__and__.Tensor", "__or__.Tensor", "__xor__.Tensor"], rule_bitwise_tensor)
assign(["where.ScalarOther"], rule_same(ALL))
assign(["rms_norm", "mish", "log_sigmoid"], rule_unary_float_only())
assign(["mish_"], RULES["aten::mish"])
assign(["pad"], rule_same(ALL))
assign(["lstm.input", "gru.input", "rnn_tanh.input", "rnn_relu.input"], rule_unary_float_only())


# ---------------------------------------------------------------------------
# Emission
# ---------------------------------------------------------------------------

def functional_keys(op):
    return list(dict.fromkeys(op.tensor_args() + op.out_args() + op.ret_keys()))


def rows_for(op, functional_by_name, upstream):
    """Rows of `op`; out variants reuse the rows of their functional op, with
    each out argument (and the out variant's returns) unified with the
    corresponding functional return."""
    if op.is_out:
        func = functional_by_name.get(op.qualified)
        if func is None:
            return None
        rows = RULES[func.qualified](func)
        if func.qualified in upstream:
            rows = restrict_rows(rows, upstream[func.qualified], functional_keys(func))
        outs, rets, frets = op.out_args(), op.ret_keys(), func.ret_keys()
        mapped = []
        for row in rows:
            new = {k: v for k, v in row.items() if k not in frets}
            for i, fk in enumerate(frets):
                target = outs[i] if i < len(outs) else None
                if target is None:
                    continue
                v = row[fk]
                if isinstance(v, tuple) and v[1] in frets:
                    v = ("same", outs[frets.index(v[1])])
                new[target] = v
                if i < len(rets) and rets[i] != target:
                    new[rets[i]] = ("same", target)
            # A key that referred to a functional return now refers to its out arg.
            for k, v in list(new.items()):
                if isinstance(v, tuple) and v[1] in frets:
                    new[k] = ("same", outs[frets.index(v[1])])
            mapped.append(new)
        return mapped
    if op.qualified not in RULES:
        return None
    rows = RULES[op.qualified](op)
    if op.qualified in upstream:
        rows = restrict_rows(rows, upstream[op.qualified], functional_keys(op))
    return rows


def restrict_rows(op_rows, entry, keys):
    """The combinations both `op_rows` (our row form) and the edge.yaml `entry`
    accept, as rows: each pair of rows intersects into one row whose alias
    groups join both rows' groups (keys that share a group in either must be
    equal) and whose dtypes are the intersection of every list involved."""
    out, seen = [], set()
    for row, groups in normalize_rows(op_rows):
        for theirs in entry["type_constraint"]:
            parent = {k: k for k in keys}

            def find(k):
                while parent[k] != k:
                    k = parent[k]
                return k

            def join(a, b):
                parent[find(a)] = find(b)

            for root, members in groups.items():
                for m in members:
                    if m in parent and root in parent:
                        join(m, root)
            by_alias = {}
            for k in keys:
                if k in theirs:
                    by_alias.setdefault(theirs[k], []).append(k)
            for members in by_alias.values():
                for m in members[1:]:
                    join(m, members[0])
            allowed = {}
            for k in keys:
                root_of_ours = next(r for r, ms in groups.items() if k in ms)
                dtypes = set(row[root_of_ours])
                if k in theirs:
                    dtypes &= set(entry["type_alias"][theirs[k]])
                c = find(k)
                allowed[c] = allowed.get(c, dtypes) & dtypes
            if any(not d for d in allowed.values()):
                continue
            new = {}
            for k in keys:
                c = find(k)
                first = next(x for x in keys if find(x) == c)
                new[k] = sorted(allowed[c], key=ORDER.index) if k == first else ("same", first)
            sig = tuple((k, tuple(v)) for k, v in new.items())
            if sig not in seen:
                seen.add(sig)
                out.append(new)
    return out


def load_upstream(path):
    """ExecuTorch's edge.yaml entries by our qualified name (".default" dropped)."""
    import yaml
    out = {}
    for e in yaml.safe_load(open(path)):
        name = e.get("inherits", e["func"])
        if name.endswith(".default"):
            name = name[: -len(".default")]
        if "::" not in name:
            name = "aten::" + name
        out[name] = e
    return out


def signature_key(op):
    return tuple((a["name"], a["base"], a["list"], a["optional"]) for a in op.args
                 if not (a["kw"] and a["write"]) and not (a["kw"] and a["name"] in
                                                          ("dtype", "layout", "device", "pin_memory")))


def link_out_variants(ops):
    """Out variant -> functional op, by name and signature (TensorOptions dropped)."""
    functional_by_name = {}
    for op in ops:
        if op.is_out:
            continue
        for cand in ops:
            if cand.is_out and cand.ns == op.ns and cand.name == op.name and \
                    signature_key(cand) == signature_key(op) and cand.qualified not in functional_by_name:
                functional_by_name[cand.qualified] = op
                break
    return functional_by_name


def normalize_rows(op_rows):
    """Resolve ("same", k) chains and expand rows into (key -> alias group) form."""
    out = []
    for row in op_rows:
        groups = {}
        for k, v in row.items():
            root = k
            while isinstance(row[root], tuple):
                root = row[root][1]
            groups.setdefault(root, []).append(k)
        out.append((row, groups))
    return out


def emit_entry(op, op_rows, keys_order):
    alias_names, alias_lists = {}, []

    def alias_for(dtypes, used):
        dtypes = tuple(sorted(set(dtypes), key=ORDER.index))
        n = 0
        while (dtypes, n) in used:
            n += 1
        used.add((dtypes, n))
        key = (dtypes, n)
        if key not in alias_names:
            alias_names[key] = None
            alias_lists.append(key)
        return key

    rows = []
    for row, groups in normalize_rows(op_rows):
        used = set()
        assigned = {}
        for root, members in groups.items():
            a = alias_for(row[root], used)
            for m in members:
                assigned[m] = a
        rows.append(assigned)
    order = sorted(alias_lists, key=lambda k: ([ORDER.index(d) for d in k[0]], k[1]))
    for i, k in enumerate(order):
        alias_names[k] = "T%d" % i
    lines = ["- func: %s" % op.qualified, "  namespace: edge", "  inherits: %s" % op.qualified,
             "  type_alias:"]
    for k in order:
        lines.append("    %s: [%s]" % (alias_names[k], ", ".join(k[0])))
    lines.append("  type_constraint:")
    seen = set()
    for assigned in rows:
        items = [(key, alias_names[assigned[key]]) for key in keys_order if key in assigned]
        sig = tuple(items)
        if sig in seen:
            continue
        seen.add(sig)
        # Flow-style rows: same YAML data as upstream's block style, but
        # noticeably faster for yaml-cpp to load.
        lines.append("  - {%s}" % ", ".join("%s: %s" % item for item in items))
    return "\n".join(lines) + "\n"


def generate(upstream):
    ops = read_table()
    functional_by_name = link_out_variants(ops)
    entries, missing = [], []
    for op in ops:
        keys = list(dict.fromkeys(op.tensor_args() + op.out_args() + op.ret_keys()))
        if not keys:
            continue
        op_rows = rows_for(op, functional_by_name, upstream)
        if op_rows is None:
            missing.append(op.qualified)
            continue
        entries.append((op.qualified, emit_entry(op, op_rows, keys)))
    if missing:
        sys.exit("gen_edge_yaml: no dtype rule for: " + ", ".join(missing))
    header = ("# edge_ops/edge.yaml - dtype rules of the edge dialect, in ExecuTorch's edge.yaml DSL.\n"
              "# Generated by scripts/gen_edge_yaml.py from lib/Ops/operators.txt; do not edit.\n"
              "# Ops ExecuTorch's edge.yaml lists accept exactly what it accepts.\n")
    return header + "\n".join(e for _, e in sorted(entries)), len(entries)


# ---------------------------------------------------------------------------
# Comparison against another edge.yaml (e.g. upstream's)
# ---------------------------------------------------------------------------

def accepted(entry, keys):
    """Every concrete dtype assignment of `keys` that `entry` accepts."""
    result = set()
    for row in entry["type_constraint"]:
        if not all(k in row for k in keys):
            continue
        aliases = sorted({row[k] for k in keys})
        for vals in itertools.product(*[entry["type_alias"][a] for a in aliases]):
            m = dict(zip(aliases, vals))
            result.add(tuple(m[row[k]] for k in keys))
    return result


def compare(ours_text, other_path):
    import yaml
    ours = {e["inherits"]: e for e in yaml.safe_load(ours_text)}
    other = yaml.safe_load(open(other_path))
    ops = {op.qualified: op for op in read_table()}
    bad = 0
    for e in other:
        name = e["inherits"]
        op = ops.get(name)
        if op is None or name not in ours:
            print("missing op: %s" % name)
            bad += 1
            continue
        keys = op.tensor_args() + op.ret_keys()
        missing = accepted(e, keys) - accepted(ours[name], keys)
        if missing:
            bad += 1
            print("%s: %d combinations rejected, e.g. %s" %
                  (name, len(missing), ", ".join(str(dict(zip(keys, m))) for m in sorted(missing)[:3])))
    return bad


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--compare", metavar="EDGE_YAML")
    parser.add_argument("--upstream", default=UPSTREAM, metavar="EDGE_YAML",
                        help="ExecuTorch's edge.yaml: the ops it lists get its verdicts")
    parser.add_argument("-o", "--output", default=OUTPUT)
    args = parser.parse_args()
    if not os.path.exists(args.upstream):
        sys.exit("gen_edge_yaml: %s not found; pass --upstream EDGE_YAML (ExecuTorch's edge.yaml)" % args.upstream)
    text, count = generate(load_upstream(args.upstream))
    if args.compare:
        sys.exit(1 if compare(text, args.compare) else 0)
    if args.check:
        current = open(args.output).read() if os.path.exists(args.output) else ""
        if current != text:
            sys.exit("gen_edge_yaml: %s is stale; rerun scripts/gen_edge_yaml.py" % args.output)
        return
    with open(args.output, "w") as f:
        f.write(text)
    print("wrote %s (%d ops)" % (args.output, count))


if __name__ == "__main__":
    main()
