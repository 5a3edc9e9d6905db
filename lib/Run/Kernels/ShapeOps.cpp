//===- Run/Kernels/ShapeOps.cpp - view, permute, expand, squeeze, ... -----===//
//
// The functional `_copy` forms of view ops, and other ops that only move
// elements (flip, roll, repeat, tril/triu). Each is a strided View of the
// input copied into out. Input and out must share a dim order, as the
// portable kernels require; out keeps the input's dtype.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

#include <numeric>

namespace exir::run::kern {
namespace {

/// out = the view `v` of self (sizes taken from the view).
void copyOut(Tensor &out, const View &v, const Tensor &self) {
  out.resize(v.sizes);
  checkSameDimOrder({&self, &out});
  copyView(View::of(out), v);
}

void prepare(const Tensor &self, const Tensor &out) { checkSameDtype(self, out, "self", "out"); }

void viewCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  checkSameDtype(self, out, "self", "out");
  checkContiguous({&self});
  out.resize(inferSizes(intListArg(args, 1), self.numel()));
  checkContiguous({&out});
  std::memmove(out.data, self.data, self.nbytes());
}

void permuteCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  prepare(self, out);
  std::vector<int64_t> dims = intListArg(args, 1);
  if (int64_t(dims.size()) != self.dim()) fail("dims " + sizesText(dims) + " do not match the rank " + std::to_string(self.dim()));
  std::vector<bool> seen(dims.size());
  for (int64_t &d : dims) {
    d = wrapDim(d, self.dim());
    if (seen[d]) fail("dims " + sizesText(dims) + " repeat a dimension");
    seen[d] = true;
  }
  copyOut(out, View::of(self).permuted(dims), self);
}

void transposeCopy(std::span<Value *> args, int64_t dim0, int64_t dim1, Tensor &out) {
  const Tensor &self = tensorArg(args, 0);
  prepare(self, out);
  std::vector<int64_t> perm(self.dim());
  std::iota(perm.begin(), perm.end(), 0);
  if (self.dim() > 0) std::swap(perm[wrapDim(dim0, self.dim())], perm[wrapDim(dim1, self.dim())]);
  copyOut(out, View::of(self).permuted(perm), self);
}

void expandCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 3);
  prepare(self, out);
  std::vector<int64_t> sizes = intListArg(args, 1);
  if (sizes.size() < self.sizes.size())
    fail("cannot expand " + sizesText(self.sizes) + " to fewer dimensions " + sizesText(sizes));
  size_t lead = sizes.size() - self.sizes.size();
  View src = View::of(self);
  for (size_t i = 0; i < lead; ++i) src = src.unsqueezed(0);
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t have = src.sizes[i];
    if (sizes[i] == -1) {
      if (i < lead) fail("-1 is not allowed for a new leading dimension");
      sizes[i] = have;
    } else if (have != sizes[i]) {
      if (have != 1) fail("cannot expand " + sizesText(self.sizes) + " to " + sizesText(sizes));
      src.byteStrides[i] = 0;
    }
    src.sizes[i] = sizes[i];
  }
  copyOut(out, src, self);
}

void squeezeCopy(std::span<Value *> args, std::vector<int64_t> dims, bool allDims, Tensor &out) {
  const Tensor &self = tensorArg(args, 0);
  checkSameDtype(self, out, "self", "out");
  checkContiguous({&self});
  std::vector<bool> squeeze(self.dim(), allDims);
  for (int64_t d : dims) squeeze[wrapDim(d, self.dim())] = true;
  View v = View::of(self);
  for (int64_t d = self.dim() - 1; d >= 0; --d)
    if (squeeze[d] && self.sizes[d] == 1) v = v.selected(d, 0);
  copyOut(out, v, self);
}

void unsqueezeCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  checkSameDtype(self, out, "self", "out");
  checkContiguous({&self});
  copyOut(out, View::of(self).unsqueezed(wrapDim(intArg(args, 1), self.dim() + 1)), self);
}

void identityCopy(std::span<Value *> args, size_t outIdx) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, outIdx);
  prepare(self, out);
  copyOut(out, View::of(self), self);
}

void flipCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  prepare(self, out);
  View v = View::of(self);
  std::vector<bool> flipped(self.dim());
  for (int64_t d : intListArg(args, 1)) {
    d = wrapDim(d, self.dim());
    if (flipped[d]) fail("dims repeat dimension " + std::to_string(d));
    flipped[d] = true;
    if (v.sizes[d] > 0) v.data += (v.sizes[d] - 1) * v.byteStrides[d];
    v.byteStrides[d] = -v.byteStrides[d];
  }
  copyOut(out, v, self);
}

void rollCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 3);
  prepare(self, out);
  std::vector<int64_t> shifts = intListArg(args, 1), dims = intListArg(args, 2);
  out.resize(self.sizes);
  checkSameDimOrder({&self, &out});
  if (dims.empty()) { // roll the flattened tensor
    checkContiguous({&self});
    if (shifts.size() != 1) fail("without dims, shifts must have one element");
    int64_t n = self.numel(), esize = int64_t(elementSize(self.dtype));
    if (n == 0) return;
    int64_t s = ((shifts[0] % n) + n) % n;
    std::memcpy(out.data + s * esize, self.data, size_t((n - s) * esize));
    std::memcpy(out.data, self.data + (n - s) * esize, size_t(s * esize));
    return;
  }
  if (shifts.size() != dims.size()) fail("shifts and dims must have the same length");
  // One dim at a time: out = roll(src, dim); the second copy reads the first.
  Tensor tmp = Tensor::make(self.dtype, self.sizes);
  View src = View::of(self);
  for (size_t k = 0; k < dims.size(); ++k) {
    int64_t d = wrapDim(dims[k], self.dim()), n = self.sizes[d];
    Tensor &dstTensor = (dims.size() - k) % 2 == 1 ? out : tmp;
    View dst = View::of(dstTensor);
    int64_t s = n ? ((shifts[k] % n) + n) % n : 0;
    copyView(dst.sliced(d, s, n - s), src.sliced(d, 0, n - s));
    copyView(dst.sliced(d, 0, s), src.sliced(d, n - s, s));
    src = dst;
  }
}

void repeatCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  checkSameDtype(self, out, "self", "out");
  checkContiguous({&self});
  std::vector<int64_t> repeats = intListArg(args, 1);
  if (repeats.size() < self.sizes.size()) fail("repeats has fewer dimensions than self");
  size_t lead = repeats.size() - self.sizes.size();
  std::vector<int64_t> inner(lead, 1);
  inner.insert(inner.end(), self.sizes.begin(), self.sizes.end());
  std::vector<int64_t> outSizes(repeats.size());
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i] < 0) fail("repeats must not be negative");
    outSizes[i] = repeats[i] * inner[i];
  }
  out.resize(outSizes);
  checkContiguous({&out});
  // out viewed as [r0, s0, r1, s1, ...]; the source ignores the r dims.
  View dst = View::of(out), src = View::of(self);
  for (size_t i = 0; i < lead; ++i) src = src.unsqueezed(0);
  View dst2, src2;
  dst2.data = dst.data, dst2.dtype = dst.dtype, src2.data = src.data, src2.dtype = src.dtype;
  for (size_t i = 0; i < repeats.size(); ++i) {
    dst2.sizes.insert(dst2.sizes.end(), {repeats[i], inner[i]});
    dst2.byteStrides.insert(dst2.byteStrides.end(), {inner[i] * dst.byteStrides[i], dst.byteStrides[i]});
    src2.sizes.insert(src2.sizes.end(), {repeats[i], inner[i]});
    src2.byteStrides.insert(src2.byteStrides.end(), {0, src.byteStrides[i]});
  }
  copyView(dst2, src2);
}

/// tril (keepLower) / triu over the last two dims.
void triangle(std::span<Value *> args, bool keepLower) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  prepare(self, out);
  if (self.dim() < 2) fail("needs a tensor of rank 2 or more");
  int64_t diagonal = intArg(args, 1);
  copyOut(out, View::of(self), self);
  View dst = View::of(out);
  size_t esize = elementSize(out.dtype);
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t row = idx[idx.size() - 2], col = idx.back();
    bool keep = keepLower ? col - row <= diagonal : col - row >= diagonal;
    if (keep) return;
    uint8_t *p = dst.data;
    for (size_t i = 0; i < idx.size(); ++i) p += idx[i] * dst.byteStrides[i];
    std::memset(p, 0, esize);
  });
}

void asStridedCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 4);
  prepare(self, out);
  checkContiguous({&self});
  std::vector<int64_t> sizes = intListArg(args, 1), strides = intListArg(args, 2);
  int64_t offset = optIntArg(args, 3).value_or(0);
  if (sizes.size() != strides.size()) fail("size and stride must have the same length");
  // The view must stay inside self's elements.
  int64_t last = offset, esize = int64_t(elementSize(self.dtype));
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || strides[i] < 0) fail("sizes and strides must not be negative");
    if (sizes[i] == 0) last = -1;
    if (last >= 0) last += (sizes[i] - 1) * strides[i];
  }
  if (offset < 0 || last >= self.numel()) fail("as_strided view is out of the bounds of self");
  View v = View::of(self);
  v.data += offset * esize;
  v.sizes = sizes;
  v.byteStrides = strides;
  for (int64_t &st : v.byteStrides) st *= esize;
  copyOut(out, v, self);
}

void diagonalCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 4);
  prepare(self, out);
  int64_t offset = intArg(args, 1), d1 = wrapDim(intArg(args, 2), self.dim()), d2 = wrapDim(intArg(args, 3), self.dim());
  if (d1 == d2) fail("diagonal dimensions cannot be identical");
  View v = View::of(self);
  int64_t length = offset >= 0 ? std::min(self.sizes[d1], self.sizes[d2] - offset) : std::min(self.sizes[d1] + offset, self.sizes[d2]);
  length = std::max<int64_t>(length, 0);
  if (length > 0) v.data += offset >= 0 ? offset * v.byteStrides[d2] : -offset * v.byteStrides[d1];
  int64_t diagStride = v.byteStrides[d1] + v.byteStrides[d2];
  View d;
  d.data = v.data, d.dtype = v.dtype;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != d1 && i != d2) d.sizes.push_back(v.sizes[i]), d.byteStrides.push_back(v.byteStrides[i]);
  d.sizes.push_back(length);
  d.byteStrides.push_back(diagStride);
  copyOut(out, d, self);
}

void unfoldCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 4);
  prepare(self, out);
  int64_t dim = wrapDim(intArg(args, 1), self.dim()), size = intArg(args, 2), step = intArg(args, 3);
  int64_t have = self.dim() ? self.sizes[dim] : 1;
  if (size < 0 || size > have || step <= 0) fail("unfold size " + std::to_string(size) + " / step " + std::to_string(step) + " invalid for a dimension of " + std::to_string(have));
  View v = View::of(self);
  if (self.dim() == 0) v = v.unsqueezed(0);
  int64_t stride = v.byteStrides[dim];
  v.sizes[dim] = (have - size) / step + 1;
  v.byteStrides[dim] = stride * step;
  v.sizes.push_back(size);
  v.byteStrides.push_back(stride);
  copyOut(out, v, self);
}

/// pixel_shuffle (r > 0) / pixel_unshuffle: [*, C*r*r, H, W] <-> [*, C, H*r, W*r].
void pixelShuffle(std::span<Value *> args, bool shuffle) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  checkSameDtype(self, out, "self", "out");
  checkContiguous({&self});
  int64_t r = intArg(args, 1), n = self.dim();
  if (n < 3 || r <= 0) fail("expected a tensor of rank >= 3 and a positive factor");
  std::vector<int64_t> batch(self.sizes.begin(), self.sizes.end() - 3);
  int64_t c = self.sizes[n - 3], h = self.sizes[n - 2], w = self.sizes[n - 1];
  View v = View::of(self);
  std::vector<int64_t> outSizes = batch;
  // Express both as a 5-d permutation of the innermost dims.
  int64_t e = int64_t(elementSize(self.dtype));
  View src;
  src.data = v.data, src.dtype = v.dtype;
  for (size_t i = 0; i < batch.size(); ++i) src.sizes.push_back(batch[i]), src.byteStrides.push_back(v.byteStrides[i]);
  if (shuffle) {
    if (c % (r * r)) fail("channels are not divisible by the square of upscale_factor");
    int64_t oc = c / (r * r);
    // self [oc, r, r, h, w] -> out [oc, h, r, w, r]
    std::vector<int64_t> sz{oc, h, r, w, r}, st{r * r * h * w, w, r * h * w, 1, h * w};
    for (size_t i = 0; i < 5; ++i) src.sizes.push_back(sz[i]), src.byteStrides.push_back(st[i] * e);
    outSizes.insert(outSizes.end(), {oc, h * r, w * r});
  } else {
    if (h % r || w % r) fail("height and width are not divisible by downscale_factor");
    int64_t oh = h / r, ow = w / r;
    // self [c, oh, r, ow, r] -> out [c, r, r, oh, ow]
    std::vector<int64_t> sz{c, r, r, oh, ow}, st{h * w, w, 1, r * w, r};
    for (size_t i = 0; i < 5; ++i) src.sizes.push_back(sz[i]), src.byteStrides.push_back(st[i] * e);
    outSizes.insert(outSizes.end(), {c * r * r, oh, ow});
  }
  out.resize(outSizes);
  checkContiguous({&out});
  View dst = View::of(out);
  dst.sizes = src.sizes;
  dst.byteStrides.assign(src.sizes.size(), 0);
  for (int64_t i = int64_t(src.sizes.size()) - 1, stride = e; i >= 0; --i) dst.byteStrides[i] = stride, stride *= src.sizes[i];
  copyView(dst, src);
}

/// copy.out: out = src broadcast to self's sizes, in self's dtype.
void copyOutOp(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &src = tensorArg(args, 1);
  Tensor &out = tensorArg(args, 3);
  prepare(self, out);
  out.resize(self.sizes);
  checkSameDimOrder({&self, &out});
  Operand o = operandFor(src, self.sizes);
  View v{o.data, self.sizes, o.byteStrides, src.dtype};
  copyView(View::of(out), v);
}

KernelRegistration registration({
    {"aten::as_strided_copy.out", [](auto args) { asStridedCopy(args); }},
    {"aten::diagonal_copy.out", [](auto args) { diagonalCopy(args); }},
    {"aten::unfold_copy.out", [](auto args) { unfoldCopy(args); }},
    {"aten::pixel_shuffle.out", [](auto args) { pixelShuffle(args, true); }},
    {"aten::pixel_unshuffle.out", [](auto args) { pixelShuffle(args, false); }},
    {"aten::copy.out", [](auto args) { copyOutOp(args); }},
    {"aten::view_copy.out", [](auto args) { viewCopy(args); }},
    {"aten::permute_copy.out", [](auto args) { permuteCopy(args); }},
    {"aten::transpose_copy.int_out",
     [](auto args) { transposeCopy(args, intArg(args, 1), intArg(args, 2), tensorArg(args, 3)); }},
    {"aten::t_copy.out", [](auto args) {
       if (tensorArg(args, 0).dim() > 2) fail("t expects a tensor of rank <= 2");
       transposeCopy(args, 0, -1, tensorArg(args, 1));
     }},
    {"aten::expand_copy.out", [](auto args) { expandCopy(args); }},
    {"aten::squeeze_copy.out", [](auto args) { squeezeCopy(args, {}, true, tensorArg(args, 1)); }},
    {"aten::squeeze_copy.dim_out", [](auto args) { squeezeCopy(args, {intArg(args, 1)}, false, tensorArg(args, 2)); }},
    {"aten::squeeze_copy.dims_out", [](auto args) { squeezeCopy(args, intListArg(args, 1), false, tensorArg(args, 2)); }},
    {"aten::unsqueeze_copy.out", [](auto args) { unsqueezeCopy(args); }},
    {"aten::alias_copy.out", [](auto args) { identityCopy(args, 1); }},
    {"aten::detach_copy.out", [](auto args) { identityCopy(args, 1); }},
    {"aten::lift_fresh_copy.out", [](auto args) { identityCopy(args, 1); }},
    {"aten::clone.out", [](auto args) {
       // memory_format (args[1]) is honoured by the dim order ops; here out keeps self's.
       identityCopy(args, 2);
     }},
    {"aten::flip.out", [](auto args) { flipCopy(args); }},
    {"aten::roll.out", [](auto args) { rollCopy(args); }},
    {"aten::repeat.out", [](auto args) { repeatCopy(args); }},
    {"aten::tril.out", [](auto args) { triangle(args, true); }},
    {"aten::triu.out", [](auto args) { triangle(args, false); }},
});

} // namespace
} // namespace exir::run::kern
