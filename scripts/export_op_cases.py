#!/usr/bin/env python3
# export_op_cases.py - real torch.export programs, one small program per operator case.
#
# Needs PyTorch (run it on a machine that has torch 2.11; the build machines have
# none). For every case below it writes, into OUT/ (default testdata/ops):
#   NAME.pt2          torch.export.save(torch.export.export(module, inputs))
#   NAME.inK.npy      input K (numpy .npy)
#   NAME.outK.npy     output K of eager PyTorch on those inputs (pytree leaves, in order)
# and OUT/manifest.json: per case its description, the ops of the exported graph and
# the ops after `ep.run_decompositions()` (the core ATen set upstream to_edge sees).
# With --corpus DIR it also records, for each DIR/*.pt2, the ops after
# run_decompositions() (OUT/corpus_decomposed.json).
#
# Weights and inputs are seeded (torch.manual_seed(0) per case), so the files are
# reproducible up to torch's own serialization. Cases that fail to export are
# listed in the manifest under "failed" with the error, not silently skipped.
#
# Usage: python3 scripts/export_op_cases.py [--out DIR] [--corpus DIR] [--only NAME,...]
import argparse
import collections
import json
import os
import sys
import traceback

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

try:  # registers the pytree types of HF outputs, needed to load the corpus programs
    import transformers  # noqa: F401
except Exception:  # pragma: no cover
    pass
try:  # registers torch.ops.quantized_decomposed.*
    import torch.ao.quantization.fx._decomposed  # noqa: F401
    HAVE_QD = True
except Exception:  # pragma: no cover
    HAVE_QD = False


class Fn(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *args):
        return self.f(*args)


def r(*s):
    return torch.randn(*s)


def ri(lo, hi, *s, dtype=torch.int64):
    return torch.randint(lo, hi, s, dtype=dtype)


def pos(*s):
    return torch.rand(*s) + 0.1


CASES = []


def case(name, what, make, dynamic=None):
    """make() -> (module, inputs tuple); called after seeding."""
    CASES.append((name, what, make, dynamic))


def fn(name, what, f, *inputs_makers, dynamic=None):
    # Fn.forward takes *args: torch.export wants the per-input specs wrapped once more.
    case(name, what, lambda: (Fn(f), tuple(m() for m in inputs_makers)), None if dynamic is None else (dynamic,))


# --- elementwise, binary -------------------------------------------------------
fn("add_alpha", "add.Tensor with alpha", lambda x, y: torch.add(x, y, alpha=2), lambda: r(2, 3), lambda: r(2, 3))
fn("add_broadcast", "broadcast [2,1,4]+[3,1]", lambda x, y: x + y, lambda: r(2, 1, 4), lambda: r(3, 1))
fn("add_scalar", "add a Python float", lambda x: x + 1.5, lambda: r(4))
fn("add_int_float", "int64 + float32 promotion", lambda x, y: x + y, lambda: ri(0, 10, 4), lambda: r(4))
fn("add_int_scalar_float", "int64 tensor + float scalar -> float", lambda x: x + 0.5, lambda: ri(0, 10, 4))
fn("sub_alpha", "sub.Tensor with alpha", lambda x, y: torch.sub(x, y, alpha=3), lambda: r(3), lambda: r(3))
fn("rsub_scalar", "1 - x", lambda x: 1 - x, lambda: r(5))
fn("mul", "mul.Tensor", lambda x, y: x * y, lambda: r(2, 3), lambda: r(3))
fn("mul_scalar", "mul by scalar", lambda x: x * 3.0, lambda: r(4))
fn("mul_bool", "bool * bool", lambda x, y: (x > 0) * (y > 0), lambda: r(6), lambda: r(6))
fn("div", "div.Tensor", lambda x, y: x / y, lambda: r(2, 3), lambda: pos(2, 3))
fn("div_trunc", "div rounding_mode=trunc", lambda x, y: torch.div(x, y, rounding_mode="trunc"), lambda: r(6) * 5, lambda: pos(6))
fn("div_floor", "div rounding_mode=floor", lambda x, y: torch.div(x, y, rounding_mode="floor"), lambda: r(6) * 5, lambda: pos(6))
fn("div_int", "int64 / int64 -> float", lambda x, y: x / y, lambda: ri(-9, 9, 5), lambda: ri(1, 4, 5))
fn("floor_divide_int", "int64 // int64", lambda x, y: x // y, lambda: ri(-9, 9, 5), lambda: ri(1, 4, 5))
fn("remainder", "x % y (floats, sign of divisor)", lambda x, y: x % y, lambda: r(6) * 4, lambda: pos(6) * 2)
fn("fmod", "fmod", lambda x, y: torch.fmod(x, y), lambda: r(6) * 4, lambda: pos(6) * 2)
fn("pow_scalar", "x ** 2", lambda x: x ** 2, lambda: r(5))
fn("pow_half", "x ** 0.5", lambda x: x ** 0.5, lambda: pos(5))
fn("pow_tensor", "x ** y", lambda x, y: x ** y, lambda: pos(5), lambda: r(5))
fn("pow_scalar_base", "2 ** x", lambda x: 2 ** x, lambda: r(5))
fn("maximum", "maximum", torch.maximum, lambda: r(5), lambda: r(5))
fn("minimum", "minimum", torch.minimum, lambda: r(5), lambda: r(5))
fn("atan2", "atan2", torch.atan2, lambda: r(5), lambda: r(5))
# --- elementwise, unary --------------------------------------------------------
for _n, _f, _mk in [
    ("neg", torch.neg, r), ("abs", torch.abs, r), ("exp", torch.exp, r), ("expm1", torch.expm1, r),
    ("log", torch.log, pos), ("log1p", torch.log1p, pos), ("log2", torch.log2, pos), ("sqrt", torch.sqrt, pos),
    ("rsqrt", torch.rsqrt, pos), ("reciprocal", torch.reciprocal, pos), ("sin", torch.sin, r), ("cos", torch.cos, r),
    ("tan", torch.tan, r), ("asin", torch.asin, lambda *s: torch.rand(*s) * 1.8 - 0.9), ("atan", torch.atan, r),
    ("tanh", torch.tanh, r), ("sigmoid", torch.sigmoid, r), ("erf", torch.erf, r), ("floor", torch.floor, r),
    ("ceil", torch.ceil, r), ("round", torch.round, lambda *s: torch.randn(*s) * 3), ("trunc", torch.trunc, r),
    ("sign", torch.sign, r), ("relu", torch.relu, r), ("relu6", F.relu6, lambda *s: torch.randn(*s) * 5),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.1), r), ("elu", F.elu, r), ("gelu", F.gelu, r),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), r), ("hardswish", F.hardswish, lambda *s: torch.randn(*s) * 4),
    ("hardsigmoid", F.hardsigmoid, lambda *s: torch.randn(*s) * 4), ("softplus", F.softplus, r), ("silu", F.silu, r),
    ("mish", F.mish, r), ("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.5), r), ("logsigmoid", F.logsigmoid, r),
]:
    fn(_n, _n, _f, (lambda mk: (lambda: mk(2, 8)))(_mk))
fn("relu_inplace", "relu_ on an intermediate", lambda x: torch.relu_(x * 2), lambda: r(8))
fn("hardtanh_inplace", "hardtanh_ (relu6 in mobilenet)", lambda x: F.hardtanh(x * 2, 0.0, 6.0, inplace=True), lambda: r(8) * 4)
fn("add_inplace", "x.add_(y) on an intermediate", lambda x, y: (x * 1).add_(y), lambda: r(4), lambda: r(4))
fn("clamp", "clamp(min, max)", lambda x: torch.clamp(x, -0.5, 0.5), lambda: r(8))
fn("clamp_min_tensor", "clamp(min=tensor)", lambda x, y: torch.clamp(x, min=y), lambda: r(8), lambda: r(8))
fn("where", "where(x > 0, x, y)", lambda x, y: torch.where(x > 0, x, y), lambda: r(2, 4), lambda: r(4))
fn("where_scalar", "where(c, x, 0.0)", lambda x: torch.where(x > 0, x, 0.0), lambda: r(6))
fn("masked_fill", "masked_fill with a scalar", lambda x: x.masked_fill(x > 0, -1.0), lambda: r(2, 4))
fn("masked_fill_tensor", "masked_fill with a 0-dim tensor value",
   lambda x, v: x.masked_fill(x > 0, v), lambda: r(2, 4), lambda: r())
fn("clamp_min_max", "clamp_min, clamp_max", lambda x: torch.clamp_max(torch.clamp_min(x, -0.5), 0.5), lambda: r(8))
fn("rsub_tensor", "rsub(x, y, alpha=2)", lambda x, y: torch.rsub(x, y, alpha=2), lambda: r(5), lambda: r(5))
fn("min_all", "x.min() of every element", lambda x: x.min(), lambda: r(3, 4))
fn("logit_eps", "logit with eps", lambda x: torch.logit(x, eps=1e-3), lambda: torch.rand(6))
fn("mse_loss", "mse_loss mean and sum", lambda x, y: F.mse_loss(x, y) + F.mse_loss(x, y, reduction="sum"),
   lambda: r(3, 4), lambda: r(3, 4))
fn("pixel_unshuffle", "pixel_unshuffle 2", lambda x: F.pixel_unshuffle(x, 2), lambda: r(1, 2, 4, 6))
case("prelu", "nn.PReLU(3)", lambda: (nn.PReLU(3), (r(2, 3, 4),)))
case("glu", "nn.GLU(dim=1)", lambda: (nn.GLU(dim=1), (r(2, 6, 3),)))
fn("view_as_expand_as", "x.view_as(y) + z.expand_as(y)", lambda x, y, z: x.view_as(y) + z.expand_as(y),
   lambda: r(6), lambda: r(2, 3), lambda: r(2, 1))
def _inplace_mix(x):
    y = x.clone()
    y.clamp_min_(-0.5).mul_(2.0).exp_()
    y.masked_fill_(x > 0.8, 0.0).sub_(1.0).abs_()
    z = torch.zeros_like(x)
    z.scatter_add_(1, torch.tensor([[0, 2, 1, 0], [3, 3, 0, 1]]), y)
    return z.leaky_relu_(0.1) + y.sqrt_()


fn("inplace_mix", "clamp_min_, mul_, exp_, masked_fill_, sub_, abs_, scatter_add_, leaky_relu_, sqrt_ on clones",
   _inplace_mix, lambda: r(2, 4))
fn("einsum_attention", "einsum bhqd,bhkd->bhqk then bhqk,bhkd->bqhd",
   lambda q, k: torch.einsum("bhqk,bhkd->bqhd", torch.einsum("bhqd,bhkd->bhqk", q, k).softmax(-1), k),
   lambda: r(1, 2, 3, 4), lambda: r(1, 2, 5, 4))
fn("einsum_outer_ellipsis", "rotary's einsum i,j->ij and ...d,d->...", lambda t, f, x: torch.einsum("i,j->ij", t, f).sum()
   + torch.einsum("...d,d->...", x, f), lambda: r(5), lambda: r(3), lambda: r(2, 4, 3))
fn("empty_like_filled", "torch.empty_like(x).fill_(2) * x", lambda x: torch.empty_like(x).fill_(2.0) * x, lambda: r(2, 3))
fn("pow_fill_inplace", "pow_ (scalar and tensor exponent) and fill_ with a 0-dim tensor on clones",
   lambda x, e, v: x.clone().pow_(2.0) + x.abs().pow_(e) + torch.zeros_like(x).fill_(v),
   lambda: r(2, 3), lambda: torch.rand(3) + 0.5, lambda: r())
fn("bitwise_ops", "bitwise and/or/xor/not on int64", lambda x, y: ((x & y) | (x ^ y)) + (~x), lambda: ri(0, 16, 6), lambda: ri(0, 16, 6))
fn("logical_ops", "logical and/or/not on comparisons", lambda x, y: torch.logical_or(torch.logical_and(x > 0, y < 0), torch.logical_not(x > y)), lambda: r(6), lambda: r(6))
fn("compare_ops", "eq/ne/lt/le/gt/ge summed as ints", lambda x, y: (x == y).int() + (x != y).int() * 2 + (x < y).int() * 4 + (x <= 0).int() * 8 + (x > y).int() * 16 + (y >= 0.5).int() * 32, lambda: torch.tensor([1., 2., 3., 0., -1.]), lambda: torch.tensor([1., 3., 2., 0.5, -1.]))
fn("isnan_isinf", "isnan / isinf", lambda x: torch.isnan(x).int() + 2 * torch.isinf(x).int(), lambda: torch.tensor([0., float("nan"), float("inf"), -float("inf"), 1.]))
# --- linear algebra -------------------------------------------------------------
fn("mm", "mm", torch.mm, lambda: r(3, 4), lambda: r(4, 5))
fn("bmm", "bmm", torch.bmm, lambda: r(2, 3, 4), lambda: r(2, 4, 5))
fn("addmm", "addmm beta/alpha", lambda b, x, w: torch.addmm(b, x, w, beta=0.5, alpha=2.0), lambda: r(5), lambda: r(3, 4), lambda: r(4, 5))
fn("baddbmm", "baddbmm", lambda b, x, w: torch.baddbmm(b, x, w, beta=0.5, alpha=2.0), lambda: r(2, 3, 5), lambda: r(2, 3, 4), lambda: r(2, 4, 5))
fn("matmul_3d_2d", "matmul [2,3,4] x [4,5]", torch.matmul, lambda: r(2, 3, 4), lambda: r(4, 5))
fn("matmul_4d", "matmul [2,2,3,4] x [2,2,4,3]", torch.matmul, lambda: r(2, 2, 3, 4), lambda: r(2, 2, 4, 3))
fn("matmul_vec", "matmul [3,4] x [4]", torch.matmul, lambda: r(3, 4), lambda: r(4))
case("linear", "nn.Linear(4, 3)", lambda: (nn.Linear(4, 3), (r(2, 4),)))
case("linear_nobias", "nn.Linear(4, 3, bias=False)", lambda: (nn.Linear(4, 3, bias=False), (r(2, 4),)))
case("linear_3d", "nn.Linear on a rank-3 input", lambda: (nn.Linear(4, 3), (r(2, 5, 4),)))
case("linear_1d", "nn.Linear on a rank-1 input", lambda: (nn.Linear(4, 3), (r(4),)))
# --- convolution ----------------------------------------------------------------
case("conv1d", "Conv1d stride 2 padding 1", lambda: (nn.Conv1d(2, 4, 3, stride=2, padding=1), (r(1, 2, 9),)))
case("conv2d_groups", "Conv2d groups=2 stride 2 pad 1 dilation 2", lambda: (nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2), (r(2, 4, 9, 8),)))
case("conv2d_depthwise", "depthwise Conv2d", lambda: (nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False), (r(1, 4, 6, 6),)))
case("conv2d_same", "Conv2d padding='same' 1x5", lambda: (nn.Conv2d(2, 3, (1, 5), padding="same"), (r(1, 2, 4, 7),)))
case("conv_transpose2d", "ConvTranspose2d stride 2 output_padding 1", lambda: (nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1), (r(1, 4, 5, 5),)))
case("conv_transpose1d", "ConvTranspose1d groups 2", lambda: (nn.ConvTranspose1d(4, 4, 3, stride=2, groups=2), (r(1, 4, 5),)))
case("conv3d", "Conv3d", lambda: (nn.Conv3d(2, 3, 3, padding=1), (r(1, 2, 4, 4, 4),)))
# --- pooling / resampling --------------------------------------------------------
case("max_pool2d", "MaxPool2d 3/2/1 ceil_mode", lambda: (nn.MaxPool2d(3, 2, 1, ceil_mode=True), (r(1, 2, 8, 7),)))
case("max_pool2d_dilation", "MaxPool2d dilation 2", lambda: (nn.MaxPool2d(2, 1, 0, dilation=2), (r(1, 2, 6, 6),)))
case("max_pool1d", "MaxPool1d", lambda: (nn.MaxPool1d(2), (r(1, 3, 8),)))
case("max_pool1d_stride", "MaxPool1d kernel 3, stride 2, padding 1, 3-D batch",
     lambda: (nn.MaxPool1d(3, stride=2, padding=1), (r(2, 3, 9),)))
case("avg_pool2d", "AvgPool2d 3/2/1 ceil, no pad counting", lambda: (nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), (r(1, 2, 8, 7),)))
case("avg_pool2d_divisor", "AvgPool2d divisor_override", lambda: (nn.AvgPool2d(2, divisor_override=3), (r(1, 2, 6, 6),)))
case("adaptive_avg_pool2d_global", "AdaptiveAvgPool2d(1)", lambda: (nn.AdaptiveAvgPool2d(1), (r(2, 3, 5, 7),)))
case("adaptive_avg_pool2d_uneven", "AdaptiveAvgPool2d 7x7 -> 3x3", lambda: (nn.AdaptiveAvgPool2d((3, 3)), (r(1, 2, 7, 7),)))
case("adaptive_max_pool2d", "AdaptiveMaxPool2d 6x6 -> 2x3", lambda: (nn.AdaptiveMaxPool2d((2, 3)), (r(1, 2, 6, 6),)))
fn("upsample_nearest", "interpolate nearest x2", lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), lambda: r(1, 2, 3, 4))
fn("upsample_bilinear", "interpolate bilinear size", lambda x: F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=False), lambda: r(1, 2, 3, 4))
fn("upsample_bilinear_ac", "interpolate bilinear align_corners", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True), lambda: r(1, 2, 3, 4))
fn("pixel_shuffle", "pixel_shuffle 2", lambda x: F.pixel_shuffle(x, 2), lambda: r(1, 8, 2, 3))
# --- normalization --------------------------------------------------------------
case("layer_norm", "LayerNorm(8)", lambda: (nn.LayerNorm(8), (r(2, 3, 8),)))
case("layer_norm_2d", "LayerNorm([3, 4]) no affine", lambda: (nn.LayerNorm([3, 4], elementwise_affine=False), (r(2, 3, 4),)))
case("group_norm", "GroupNorm(2, 4)", lambda: (nn.GroupNorm(2, 4), (r(2, 4, 3, 3),)))
case("rms_norm", "RMSNorm(8)", lambda: (nn.RMSNorm(8), (r(2, 3, 8),)))


def _bn_eval():
    m = nn.BatchNorm2d(3)
    m.running_mean.copy_(torch.randn(3))
    m.running_var.copy_(torch.rand(3) + 0.5)
    m.weight.data.copy_(torch.randn(3))
    m.bias.data.copy_(torch.randn(3))
    return m.eval(), (r(2, 3, 4, 4),)


case("batch_norm_eval", "BatchNorm2d eval with running stats", _bn_eval)
case("batch_norm1d_eval", "BatchNorm1d eval on [N, C]", lambda: (nn.BatchNorm1d(5).eval(), (r(4, 5),)))
case("instance_norm", "InstanceNorm2d affine", lambda: (nn.InstanceNorm2d(3, affine=True), (r(2, 3, 4, 4),)))
case("instance_norm_plain", "InstanceNorm1d without affine", lambda: (nn.InstanceNorm1d(3), (r(2, 3, 7),)))
# --- softmax and reductions -------------------------------------------------------
fn("softmax", "softmax(dim=-1)", lambda x: torch.softmax(x, -1), lambda: r(2, 5))
fn("softmax_large", "softmax of large values (stability)", lambda x: torch.softmax(x * 100, 1), lambda: r(2, 5))
fn("log_softmax", "log_softmax(dim=1)", lambda x: torch.log_softmax(x, 1), lambda: r(2, 5))
fn("sum_dim", "sum(dim=1, keepdim)", lambda x: x.sum(1, keepdim=True), lambda: r(2, 3, 4))
fn("sum_all", "sum()", lambda x: x.sum(), lambda: r(2, 3))
fn("sum_int", "sum of int64", lambda x: x.sum(0), lambda: ri(0, 5, 3, 4))
fn("mean_dims", "mean over (2, 3)", lambda x: x.mean((2, 3)), lambda: r(2, 3, 4, 5))
fn("amax_amin", "amax + amin", lambda x: x.amax(1) + x.amin(1), lambda: r(3, 5))
fn("argmax", "argmax(dim=1)", lambda x: x.argmax(1), lambda: r(3, 5))
fn("argmin_keepdim", "argmin(dim=0, keepdim)", lambda x: x.argmin(0, keepdim=True), lambda: r(3, 5))
fn("max_dim", "max(dim) -> values, indices", lambda x: tuple(torch.max(x, 1)), lambda: r(3, 5))
fn("min_dim", "min(dim)", lambda x: torch.min(x, 0)[0], lambda: r(3, 5))
fn("max_all", "max()", lambda x: x.max(), lambda: r(3, 5))
fn("var_std", "var + std (unbiased)", lambda x: x.var(1) + x.std(1), lambda: r(3, 5))
fn("std_biased", "std without correction, keepdim; std with correction=2",
   lambda x: x.std(-1, unbiased=False, keepdim=True) + x.std(dim=(0, 2), correction=2, keepdim=True), lambda: r(3, 4, 5))
fn("var_mean_biased", "var(unbiased=False)", lambda x: x.var((0, 1), unbiased=False), lambda: r(3, 5))
fn("cumsum", "cumsum(dim=1)", lambda x: x.cumsum(1), lambda: r(3, 5))
fn("cumsum_int", "cumsum of int64", lambda x: x.cumsum(0), lambda: ri(0, 5, 6))
fn("prod", "prod(dim=1)", lambda x: x.prod(1), lambda: r(3, 4))
fn("any_all", "any/all over a dim", lambda x: torch.any(x > 1, 1).int() + torch.all(x > -1, 1).int() * 2, lambda: r(3, 6))
fn("all_keepdim", "all over a negative dim, keepdim, on a float tensor",
   lambda x: torch.all(x, -1, keepdim=True).int(), lambda: torch.tensor([[1.0, 2.0, 0.0], [3.0, -1.0, 5.0]]))
fn("logsumexp", "logsumexp", lambda x: torch.logsumexp(x, 1), lambda: r(3, 5))
fn("norm", "linalg.vector_norm", lambda x: torch.linalg.vector_norm(x, dim=1), lambda: r(3, 5))
fn("topk", "topk(3)", lambda x: tuple(torch.topk(x, 3)), lambda: r(2, 6))
fn("sort", "sort(dim=1)", lambda x: tuple(torch.sort(x, 1)), lambda: r(2, 6))
# --- shapes and data movement -------------------------------------------------------
fn("reshape", "reshape", lambda x: x.reshape(4, 6), lambda: r(2, 3, 4))
fn("view_neg1", "view(-1, 4)", lambda x: x.view(-1, 4), lambda: r(2, 3, 4))
fn("permute", "permute (then add, so the copy is used)", lambda x: x.permute(2, 0, 1) + 1, lambda: r(2, 3, 4))
fn("transpose", "transpose then matmul", lambda x, y: x.transpose(0, 1) @ y, lambda: r(3, 2), lambda: r(3, 4))
fn("t", "t()", lambda x: x.t() * 2, lambda: r(3, 2))
fn("expand", "expand", lambda x: x.expand(3, 4) * 1, lambda: r(1, 4))
fn("squeeze_unsqueeze", "squeeze / unsqueeze", lambda x: x.squeeze(1).unsqueeze(0) + 0, lambda: r(3, 1, 4))
fn("flatten", "flatten(1)", lambda x: torch.flatten(x, 1), lambda: r(2, 3, 4))
fn("cat", "cat dim 1", lambda x, y: torch.cat([x, y], 1), lambda: r(2, 3), lambda: r(2, 2))
fn("stack", "stack dim 0", lambda x, y: torch.stack([x, y]), lambda: r(2, 3), lambda: r(2, 3))
fn("stack_dims", "stack along dims 1, -1 and -2 of three tensors",
   lambda x, y, z: torch.stack([x, y, z], 1).sum(0) + torch.stack([x, y, z], -1).sum(0).t()
   + torch.stack([x, y, z], -2).sum(0), lambda: r(2, 3), lambda: r(2, 3), lambda: r(2, 3))
fn("slice_step", "x[:, 1::2]", lambda x: x[:, 1::2] * 1, lambda: r(3, 8))
fn("slice_neg", "x[-2:]", lambda x: x[-2:] * 1, lambda: r(5, 2))
fn("select", "x[1]", lambda x: x[1] * 1, lambda: r(3, 4))
fn("narrow", "narrow", lambda x: x.narrow(1, 1, 2) * 1, lambda: r(3, 4))
fn("split", "split sizes [1, 2]", lambda x: torch.split(x, [1, 2], dim=1), lambda: r(2, 3))
fn("chunk", "chunk 2", lambda x: torch.chunk(x, 2, 0), lambda: r(4, 3))
fn("unbind", "unbind", lambda x: torch.unbind(x, 1), lambda: r(2, 3))
fn("index_tensor", "x[idx]", lambda x, i: x[i], lambda: r(5, 3), lambda: torch.tensor([4, 0, 2]))
fn("index_2d", "x[i0, i1]", lambda x, i, j: x[i, j], lambda: r(4, 5), lambda: torch.tensor([0, 3]), lambda: torch.tensor([4, 1]))
fn("index_middle", "x[:, idx]", lambda x, i: x[:, i], lambda: r(3, 5), lambda: torch.tensor([4, 0]))
fn("index_put", "index_put functional", lambda x, i, v: torch.index_put(x, (i,), v), lambda: r(5, 3), lambda: torch.tensor([1, 3]), lambda: r(2, 3))
fn("index_put_accumulate", "index_put accumulate", lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True), lambda: r(5), lambda: torch.tensor([1, 1, 3]), lambda: r(3))
fn("index_select", "index_select dim 1", lambda x, i: torch.index_select(x, 1, i), lambda: r(3, 5), lambda: torch.tensor([4, 0, 0]))
fn("gather", "gather dim 1", lambda x, i: torch.gather(x, 1, i), lambda: r(3, 4), lambda: ri(0, 4, 3, 2))
fn("scatter_src", "scatter src", lambda x, i, s: torch.scatter(x, 1, i, s), lambda: r(3, 4), lambda: torch.tensor([[0, 1], [2, 3], [3, 0]]), lambda: r(3, 2))
fn("scatter_value", "scatter value", lambda x, i: torch.scatter(x, 1, i, 9.0), lambda: r(3, 4), lambda: torch.tensor([[0], [2], [3]]))
fn("scatter_add", "scatter_add", lambda x, i, s: torch.scatter_add(x, 0, i, s), lambda: r(3, 2), lambda: torch.tensor([[0, 1], [0, 2]]), lambda: r(2, 2))
case("embedding", "nn.Embedding(10, 4)", lambda: (nn.Embedding(10, 4), (torch.tensor([[1, 2, 9], [0, 0, 5]]),)))
fn("pad_constant", "F.pad constant", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), lambda: r(1, 2, 3, 3))
fn("pad_reflect", "F.pad reflect", lambda x: F.pad(x, (1, 1, 2, 0), mode="reflect"), lambda: r(1, 2, 3, 4))
fn("pad_replicate", "F.pad replicate", lambda x: F.pad(x, (1, 1, 1, 1), mode="replicate"), lambda: r(1, 2, 3, 3))
fn("repeat", "repeat", lambda x: x.repeat(2, 3), lambda: r(2, 2))
fn("flip", "flip dims", lambda x: torch.flip(x, [0, 1]), lambda: r(2, 3))
fn("roll", "roll", lambda x: torch.roll(x, 2, 1), lambda: r(2, 5))
fn("tril_triu", "tril + triu", lambda x: torch.tril(x) + torch.triu(x, 1) * 2, lambda: r(4, 4))
fn("tril_triu_batched", "tril(-1) + triu(2) on [2, 3, 5]",
   lambda x: torch.tril(x, -1) + torch.triu(x, 2) * 3, lambda: r(2, 3, 5))
fn("clone_contiguous", "permute().contiguous()", lambda x: x.permute(1, 0).contiguous(), lambda: r(2, 3))
fn("to_int32", "to(int32)", lambda x: (x * 10).to(torch.int32), lambda: r(5))
fn("to_float64", "to(float64) and back", lambda x: (x.to(torch.float64) * 3).to(torch.float32), lambda: r(5))
fn("bool_to_float", "(x > 0).float()", lambda x: (x > 0).float() * x, lambda: r(5))
fn("type_as", "type_as", lambda x, y: x.type_as(y) + y, lambda: ri(0, 5, 4), lambda: r(4))
fn("channels_last", "to(memory_format=channels_last) then conv-free math", lambda x: x.to(memory_format=torch.channels_last) * 2, lambda: r(1, 3, 2, 2))
# --- creation --------------------------------------------------------------------
fn("arange", "arange(n) + x", lambda x: torch.arange(5) + x, lambda: ri(0, 3, 5))
fn("arange_float", "arange(0, 1, 0.25)", lambda x: torch.arange(0, 1, 0.25) * x, lambda: r(4))
fn("full", "full((2, 3), 7) + x", lambda x: torch.full((2, 3), 7.0) + x, lambda: r(2, 3))
fn("zeros_ones_like", "zeros_like + ones_like", lambda x: torch.zeros_like(x) + torch.ones_like(x) * 2 + x, lambda: r(3))
fn("new_ones", "x.new_ones", lambda x: x.new_ones((2, 3)) + x, lambda: r(3))
fn("scalar_tensor", "torch.tensor(2.5) * x", lambda x: x * torch.scalar_tensor(2.5), lambda: r(3))
fn("eye", "eye(3) + x", lambda x: torch.eye(3) + x, lambda: r(3, 3))
fn("eye_int", "eye(4, dtype=int64) * x", lambda x: torch.eye(4, dtype=torch.int64) * x, lambda: ri(1, 9, 4, 4))
fn("full_like_int", "full_like int", lambda x: torch.full_like(x, 4) + x, lambda: ri(0, 3, 4))
# --- attention and recurrent -----------------------------------------------------------
fn("sdpa", "scaled_dot_product_attention", F.scaled_dot_product_attention, lambda: r(1, 2, 4, 8), lambda: r(1, 2, 5, 8), lambda: r(1, 2, 5, 8))
fn("sdpa_causal", "sdpa is_causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), lambda: r(1, 2, 4, 8), lambda: r(1, 2, 4, 8), lambda: r(1, 2, 4, 8))
fn("sdpa_bool_mask", "sdpa boolean mask", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), lambda: r(1, 2, 4, 8), lambda: r(1, 2, 5, 8), lambda: r(1, 2, 5, 8), lambda: torch.rand(4, 5) > 0.3)
fn("sdpa_float_mask", "sdpa additive mask + scale", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3), lambda: r(1, 2, 4, 8), lambda: r(1, 2, 5, 8), lambda: r(1, 2, 5, 8), lambda: r(1, 1, 4, 5))
fn("sdpa_gqa", "sdpa enable_gqa (4 q heads, 2 kv heads)", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), lambda: r(1, 4, 3, 8), lambda: r(1, 2, 3, 8), lambda: r(1, 2, 3, 8))
case("mha", "nn.MultiheadAttention batch_first", lambda: (Fn2(nn.MultiheadAttention(8, 2, batch_first=True)), (r(2, 3, 8),)))
case("gru", "nn.GRU(4, 6, batch_first)", lambda: (FirstOut(nn.GRU(4, 6, batch_first=True)), (r(2, 3, 4),)))
case("lstm_2layer", "nn.LSTM 2 layers", lambda: (FirstOut(nn.LSTM(4, 5, num_layers=2)), (r(3, 2, 4),)))
case("rnn_tanh", "nn.RNN tanh", lambda: (FirstOut(nn.RNN(3, 4)), (r(5, 1, 3),)))
case("rnn_relu_2layer", "nn.RNN relu, 2 layers, batch_first",
     lambda: (FirstOut(nn.RNN(3, 4, num_layers=2, nonlinearity="relu", batch_first=True)), (r(2, 5, 3),)))
case("lstm_bidirectional", "nn.LSTM 2 layers, bidirectional, batch_first",
     lambda: (FirstOut(nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)), (r(2, 5, 3),)))
case("gru_bidirectional", "nn.GRU bidirectional", lambda: (FirstOut(nn.GRU(3, 4, bidirectional=True)), (r(5, 2, 3),)))
case("adaptive_max_pool2d_global", "AdaptiveMaxPool2d(1) on 3-D input", lambda: (nn.AdaptiveMaxPool2d(1), (r(3, 5, 7),)))


class Fn2(nn.Module):
    """Self-attention: module(x, x, x)[0]."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x, x, x, need_weights=False)[0]


class FirstOut(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)[0]


# --- state: buffers mutated in place -------------------------------------------------
class BufferAdd(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(4))

    def forward(self, x):
        self.acc.add_(x)
        return self.acc * 2


class KvCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.zeros(1, 6, 4))

    def forward(self, x, pos):
        self.k[:, pos] = x
        return self.k.sum(1)


case("buffer_add_", "buffer mutated with add_", lambda: (BufferAdd(), (r(4),)))
case("kv_slice_assign", "buffer updated by index_put_ (k[:, pos] = x)", lambda: (KvCache(), (r(1, 2, 4), torch.tensor([1, 3]))))
# --- quantized_decomposed -------------------------------------------------------------
if HAVE_QD:
    qd = torch.ops.quantized_decomposed
    fn("quant_dequant_tensor", "quantize/dequantize per tensor (int8)",
       lambda x: qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.05, 3, -128, 127, torch.int8), 0.05, 3, -128, 127, torch.int8),
       lambda: r(2, 8) * 4)
    fn("quant_dequant_uint8", "quantize/dequantize per tensor (uint8, clamping)",
       lambda x: qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.02, 128, 0, 255, torch.uint8), 0.02, 128, 0, 255, torch.uint8),
       lambda: r(2, 8) * 4)
    fn("quant_dequant_channel", "quantize/dequantize per channel (axis 0)",
       lambda x, s, z: qd.dequantize_per_channel(qd.quantize_per_channel(x, s, z, 0, -128, 127, torch.int8), s, z, 0, -128, 127, torch.int8),
       lambda: r(3, 4) * 3, lambda: torch.tensor([0.01, 0.05, 0.1]), lambda: torch.tensor([0, 2, -3]))
# --- dynamic shapes and control flow ---------------------------------------------------
_B = torch.export.Dim("batch", min=1, max=16)
case("dyn_mlp", "Linear+ReLU+Linear, dynamic batch 1..16",
     lambda: (nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)), (r(3, 4),)), dynamic=({0: _B},))
_S = torch.export.Dim("seq", min=2, max=32)
fn("dyn_reshape", "reshape with a symbolic size (x.view(b, -1))", lambda x: x.reshape(x.shape[0], -1) * 2, lambda: r(3, 2, 4), dynamic=({0: _B},))
fn("dyn_arange", "arange(x.shape[1]) on a dynamic dim", lambda x: x + torch.arange(x.shape[1]), lambda: r(2, 5), dynamic=({1: _S},))
fn("dyn_softmax_seq", "attention-like on a dynamic sequence", lambda x: torch.softmax(x @ x.transpose(-1, -2), -1) @ x, lambda: r(1, 5, 4), dynamic=({1: _S},))
fn("dyn_einsum_rotary", "einsum i,j->ij over a dynamic sequence (rotary angles) and bqd,bkd->bqk",
   lambda x, f: (x * torch.einsum("i,j->ij", torch.arange(x.shape[1], dtype=torch.float32), f).cos()).sum(-1)
   + torch.einsum("bqd,bkd->bqk", x, x).sum(-1), lambda: r(2, 5, 3), lambda: r(3), dynamic=({1: _S}, None))
fn("dyn_cat", "cat of two dynamic inputs", lambda x, y: torch.cat([x, y], 0) * 1, lambda: r(3, 2), lambda: r(4, 2),
   dynamic=({0: torch.export.Dim("a", min=1, max=8)}, {0: torch.export.Dim("b", min=1, max=8)}))


class CondModel(nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t.sin() * 2, lambda t: t.cos() - 1, (x,))


case("cond_sin_cos", "torch.cond on a data-dependent predicate", lambda: (CondModel(), (r(2, 3),)))


case("cond_false_branch", "the same cond with an input that takes the false branch", lambda: (CondModel(), (-torch.rand(2, 3) - 0.1,)))


# ----------------------------------------------------------------------------------------
def leaves(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for e in x for t in leaves(e)]
    if isinstance(x, (int, float, bool)):
        return [torch.tensor(x)]
    raise TypeError(f"unsupported output type {type(x)}")


def ops_of(ep):
    c = collections.Counter()
    for gm in ep.graph_module.modules():
        if isinstance(gm, torch.fx.GraphModule):
            for n in gm.graph.nodes:
                if n.op == "call_function":
                    c[str(n.target)] += 1
    return dict(sorted(c.items()))


def save_npy(path, t):
    a = t.detach().contiguous().cpu().numpy()
    np.save(path, a)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="testdata/ops")
    ap.add_argument("--corpus")
    ap.add_argument("--only")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    manifest = {"torch": torch.__version__, "cases": [], "failed": []}
    for name, what, make, dynamic in CASES:
        if only and name not in only:
            continue
        try:
            torch.manual_seed(0)
            module, inputs = make()
            module = module.eval()
            with torch.no_grad():
                expected = leaves(module(*[t.clone() for t in inputs]))
            torch.manual_seed(0)
            module2, inputs2 = make()  # fresh state (buffers mutated by the eager run)
            module2 = module2.eval()
            ep = torch.export.export(module2, inputs2, dynamic_shapes=dynamic)
            torch.export.save(ep, os.path.join(args.out, name + ".pt2"))
            for k, t in enumerate(inputs):
                save_npy(os.path.join(args.out, f"{name}.in{k}.npy"), t)
            for k, t in enumerate(expected):
                save_npy(os.path.join(args.out, f"{name}.out{k}.npy"), t)
            try:
                decomposed = ops_of(ep.run_decompositions())
            except Exception as e:  # still useful without it
                decomposed = {"error": f"{type(e).__name__}: {e}"[:300]}
            manifest["cases"].append({"name": name, "what": what, "inputs": len(inputs), "outputs": len(expected),
                                      "dynamic": dynamic is not None, "ops": ops_of(ep), "core_aten_ops": decomposed})
            print("ok  ", name, flush=True)
        except Exception as e:
            manifest["failed"].append({"name": name, "error": f"{type(e).__name__}: {e}"[:500]})
            print("FAIL", name, type(e).__name__, str(e)[:200], flush=True)
            traceback.print_exc(limit=2)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    if args.corpus:
        corpus = {}
        for fn_ in sorted(os.listdir(args.corpus)):
            if not fn_.endswith(".pt2"):
                continue
            try:
                ep = torch.export.load(os.path.join(args.corpus, fn_))
                corpus[fn_[:-4]] = {"ops": ops_of(ep), "core_aten_ops": ops_of(ep.run_decompositions())}
            except Exception as e:
                corpus[fn_[:-4]] = {"error": f"{type(e).__name__}: {e}"[:500]}
        with open(os.path.join(args.out, "corpus_decomposed.json"), "w") as f:
            json.dump(corpus, f, indent=1, sort_keys=True)
            f.write("\n")
    print(f"{len(manifest['cases'])} cases written, {len(manifest['failed'])} failed", flush=True)


if __name__ == "__main__":
    main()
