//===- Run/Kernels/SliceConcat.cpp - cat, stack, slice, select, split, pad -===//
//
// Ops that cut a tensor into pieces or glue pieces together along one dim,
// and constant_pad_nd (a negative pad crops). TensorList outs (split,
// unbind) are resized one by one; the return slot of those ops is unused.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

/// PyTorch's slice bounds: None -> the ends, negatives wrap, then clamp.
struct SliceBounds {
  int64_t start, length;
};
SliceBounds sliceBounds(int64_t size, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  if (step <= 0) fail("slice step must be positive, got " + std::to_string(step));
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  return {s, (e - s + step - 1) / step};
}

void sliceCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 5);
  checkSameDtype(self, out, "self", "out");
  checkSameDimOrder({&self, &out});
  int64_t dim = wrapDim(intArg(args, 1), self.dim()), step = intArg(args, 4);
  SliceBounds b = sliceBounds(self.sizes[dim], optIntArg(args, 2), optIntArg(args, 3), step);
  View v = View::of(self).sliced(dim, b.start, b.length, step);
  out.resize(v.sizes);
  copyView(View::of(out), v);
}

int64_t checkedIndex(int64_t index, int64_t size) {
  if (index < -size || index >= size)
    fail("index " + std::to_string(index) + " is out of bounds for a dimension of size " + std::to_string(size));
  return index < 0 ? index + size : index;
}

void selectCopy(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 3);
  checkSameDtype(self, out, "self", "out");
  checkContiguous({&self});
  if (self.dim() == 0) fail("select() cannot be applied to a 0-dim tensor");
  int64_t dim = wrapDim(intArg(args, 1), self.dim());
  View v = View::of(self).selected(dim, checkedIndex(intArg(args, 2), self.sizes[dim]));
  out.resize(v.sizes);
  copyView(View::of(out), v);
}

/// Copies consecutive chunks of `sizes` along `dim` into the outs.
void splitInto(const Tensor &self, int64_t dim, const std::vector<int64_t> &sizes, const Value::TensorList &outs,
               bool keepDim = true) {
  if (outs.size() != sizes.size())
    fail("expected " + std::to_string(sizes.size()) + " out tensors, got " + std::to_string(outs.size()));
  View src = View::of(self);
  int64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Tensor &out = *outs[i];
    checkSameDtype(self, out, "self", "out");
    View piece = keepDim ? src.sliced(dim, offset, sizes[i]) : src.selected(dim, offset);
    out.resize(piece.sizes);
    checkSameDimOrder({&self, &out});
    copyView(View::of(out), piece);
    offset += sizes[i];
  }
}

void splitWithSizes(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  std::vector<int64_t> sizes = intListArg(args, 1);
  int64_t dim = wrapDim(intArg(args, 2), self.dim()), total = 0;
  for (int64_t s : sizes) {
    if (s < 0) fail("split sizes must not be negative");
    total += s;
  }
  if (total != self.sizes[dim])
    fail("split sizes " + sizesText(sizes) + " do not add up to " + std::to_string(self.sizes[dim]));
  splitInto(self, dim, sizes, args[3]->toTensorList());
}

void splitEqual(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  int64_t splitSize = intArg(args, 1), dim = wrapDim(intArg(args, 2), self.dim());
  int64_t size = self.sizes[dim];
  if (splitSize <= 0 && size > 0) fail("split_size must be positive");
  std::vector<int64_t> sizes;
  for (int64_t offset = 0; offset < size; offset += splitSize) sizes.push_back(std::min(splitSize, size - offset));
  if (sizes.empty()) sizes.push_back(0);
  splitInto(self, dim, sizes, args[3]->toTensorList());
}

void unbind(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  int64_t dim = wrapDim(intArg(args, 1), self.dim());
  splitInto(self, dim, std::vector<int64_t>(self.sizes[dim], 1), args[2]->toTensorList(), /*keepDim=*/false);
}

void cat(std::span<Value *> args) {
  const Value::TensorList &tensors = args[0]->toTensorList();
  Tensor &out = tensorArg(args, 2);
  // Legacy: 1-d empty tensors are skipped whatever the other shapes are.
  std::vector<const Tensor *> inputs;
  ScalarType compute = ScalarType::Undefined;
  for (const Tensor *t : tensors) {
    compute = promoteTypes(compute, t->dtype);
    if (!(t->dim() == 1 && t->numel() == 0)) inputs.push_back(t);
  }
  if (tensors.empty()) fail("expected a non-empty list of tensors");
  checkCanCast(compute, out.dtype);
  if (inputs.empty()) {
    out.resize({0});
    return;
  }
  const Tensor &first = *inputs[0];
  int64_t dim = wrapDim(intArg(args, 1), first.dim());
  std::vector<int64_t> sizes = first.sizes;
  sizes[dim] = 0;
  for (const Tensor *t : inputs) {
    if (t->dim() != first.dim()) fail("tensors must have the same rank");
    for (int64_t d = 0; d < first.dim(); ++d)
      if (d != dim && t->sizes[d] != first.sizes[d])
        fail("sizes " + sizesText(t->sizes) + " and " + sizesText(first.sizes) + " differ outside dim " + std::to_string(dim));
    sizes[dim] += t->sizes[dim];
    checkSameDimOrder({t, &first});
  }
  out.resize(sizes);
  checkSameDimOrder({&first, &out});
  View dst = View::of(out);
  int64_t offset = 0;
  for (const Tensor *t : inputs) {
    copyView(dst.sliced(dim, offset, t->sizes[dim]), View::of(*t));
    offset += t->sizes[dim];
  }
}

void stack(std::span<Value *> args) {
  const Value::TensorList &tensors = args[0]->toTensorList();
  Tensor &out = tensorArg(args, 2);
  if (tensors.empty()) fail("expected a non-empty list of tensors");
  const Tensor &first = *tensors[0];
  int64_t dim = wrapDim(intArg(args, 1), first.dim() + 1);
  ScalarType compute = ScalarType::Undefined;
  for (const Tensor *t : tensors) {
    if (t->sizes != first.sizes) fail("stack expects tensors of equal size, got " + sizesText(t->sizes) + " and " + sizesText(first.sizes));
    compute = promoteTypes(compute, t->dtype);
  }
  checkCanCast(compute, out.dtype);
  std::vector<int64_t> sizes = first.sizes;
  sizes.insert(sizes.begin() + dim, int64_t(tensors.size()));
  out.resize(sizes);
  checkContiguous({&out});
  View dst = View::of(out);
  for (size_t i = 0; i < tensors.size(); ++i) {
    checkContiguous({tensors[i]});
    copyView(dst.selected(dim, int64_t(i)), View::of(*tensors[i]));
  }
}

void constantPad(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  std::vector<int64_t> pad = intListArg(args, 1);
  Scalar value = scalarArg(args, 2);
  Tensor &out = tensorArg(args, 3);
  checkSameDtype(self, out, "self", "out");
  if (pad.size() % 2 || int64_t(pad.size() / 2) > self.dim())
    fail("pad " + sizesText(pad) + " must have an even length of at most twice the rank");
  // pad = (last dim before, last dim after, second-to-last before, ...).
  std::vector<int64_t> sizes = self.sizes;
  View src = View::of(self);
  std::vector<std::pair<int64_t, int64_t>> interior(self.dim()); // (dst offset, length)
  for (int64_t d = 0; d < self.dim(); ++d) interior[d] = {0, self.sizes[d]};
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    int64_t d = self.dim() - 1 - int64_t(k), before = pad[2 * k], after = pad[2 * k + 1];
    sizes[d] = self.sizes[d] + before + after;
    if (sizes[d] < 0) fail("padded size of dim " + std::to_string(d) + " would be negative");
    int64_t cropBefore = std::max<int64_t>(-before, 0), cropAfter = std::max<int64_t>(-after, 0);
    int64_t length = std::max<int64_t>(self.sizes[d] - cropBefore - cropAfter, 0);
    src = src.sliced(d, std::min(cropBefore, self.sizes[d]), length);
    interior[d] = {std::max<int64_t>(before, 0), length};
  }
  out.resize(sizes);
  checkSameDimOrder({&self, &out});
  switchDtype(out.dtype, [&]<typename T>() {
    T fill = value.as<T>();
    std::fill(out.ptr<T>(), out.ptr<T>() + out.numel(), fill);
  });
  View dst = View::of(out);
  for (int64_t d = 0; d < self.dim(); ++d) dst = dst.sliced(d, interior[d].first, interior[d].second);
  copyView(dst, src);
}

void sliceScatter(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &src = tensorArg(args, 1);
  Tensor &out = tensorArg(args, 6);
  checkSameDtype(self, out, "self", "out");
  checkSameDimOrder({&self, &src, &out});
  int64_t dim = wrapDim(intArg(args, 2), self.dim()), step = intArg(args, 5);
  SliceBounds b = sliceBounds(self.sizes[dim], optIntArg(args, 3), optIntArg(args, 4), step);
  out.resize(self.sizes);
  copyView(View::of(out), View::of(self));
  copyView(View::of(out).sliced(dim, b.start, b.length, step), View::of(src));
}

void selectScatter(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &src = tensorArg(args, 1);
  Tensor &out = tensorArg(args, 4);
  checkSameDtype(self, out, "self", "out");
  checkSameDimOrder({&self, &out});
  int64_t dim = wrapDim(intArg(args, 2), self.dim());
  int64_t index = checkedIndex(intArg(args, 3), self.sizes[dim]);
  out.resize(self.sizes);
  copyView(View::of(out), View::of(self));
  copyView(View::of(out).selected(dim, index), View::of(src));
}

KernelRegistration registration({
    {"aten::slice_copy.Tensor_out", [](auto args) { sliceCopy(args); }},
    {"aten::select_copy.int_out", [](auto args) { selectCopy(args); }},
    {"aten::split_with_sizes_copy.out", [](auto args) { splitWithSizes(args); }},
    {"aten::split_copy.Tensor_out", [](auto args) { splitEqual(args); }},
    {"aten::unbind_copy.int_out", [](auto args) { unbind(args); }},
    {"aten::cat.out", [](auto args) { cat(args); }},
    {"aten::stack.out", [](auto args) { stack(args); }},
    {"aten::constant_pad_nd.out", [](auto args) { constantPad(args); }},
    {"aten::slice_scatter.out", [](auto args) { sliceScatter(args); }},
    {"aten::select_scatter.out", [](auto args) { selectScatter(args); }},
});

} // namespace
} // namespace exir::run::kern
