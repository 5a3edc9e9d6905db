//===- Run/Kernels/Indexing.cpp - index, index_put, gather, scatter, ... --===//
//
// Advanced indexing as PyTorch does it: bool masks become the long indices
// of their nonzero elements, index tensors broadcast together, and the
// broadcast dims replace the indexed dims in place when those are adjacent,
// or go first otherwise. Negative indices wrap; out-of-range ones are errors.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

int64_t wrapIndex(int64_t index, int64_t size) {
  if (index < -size || index >= size)
    fail("index " + std::to_string(index) + " is out of bounds for a dimension of size " + std::to_string(size));
  return index < 0 ? index + size : index;
}

void checkIndexDtype(const Tensor &t, const char *what) {
  if (t.dtype != ScalarType::Long && t.dtype != ScalarType::Int)
    fail(std::string(what) + " must be an int64 or int32 tensor, got " + dtypeText(t.dtype));
}

/// The coordinates of nonzero elements, one row per element (row-major order).
std::vector<std::vector<int64_t>> nonzeroCoords(const Tensor &t) {
  std::vector<std::vector<int64_t>> coords;
  std::vector<double> values = toVector<double>(t);
  size_t i = 0;
  forEachIndex(t.sizes, [&](const std::vector<int64_t> &idx) {
    if (values[i++] != 0) coords.push_back(idx);
  });
  if (t.dim() == 0 && values.size() == 1 && values[0] != 0) coords.push_back({});
  return coords;
}

/// The indices of an index/index_put call, resolved against self's sizes.
struct IndexPlan {
  std::vector<bool> indexed;               // per self dim
  std::vector<std::vector<int64_t>> index; // per indexed dim: values over the broadcast shape
  std::vector<int64_t> broadcast;          // broadcast shape of the index tensors
  std::vector<int64_t> resultSizes;
  int64_t insertAt = 0; // where the broadcast dims sit in the result
};

IndexPlan planIndex(const Tensor &self, const Value::OptionalTensorList &indices) {
  // Expand bool masks into one long index per masked dim.
  std::vector<std::optional<Tensor>> expanded;
  for (const Tensor *t : indices) {
    if (!t) {
      expanded.emplace_back();
      continue;
    }
    if (t->dtype == ScalarType::Bool || t->dtype == ScalarType::Byte) {
      size_t at = expanded.size();
      if (at + size_t(t->dim()) > size_t(self.dim())) fail("too many indices for a tensor of rank " + std::to_string(self.dim()));
      for (int64_t d = 0; d < t->dim(); ++d)
        if (t->sizes[d] != self.sizes[at + d])
          fail("mask " + sizesText(t->sizes) + " does not match the indexed sizes of " + sizesText(self.sizes));
      auto coords = nonzeroCoords(*t);
      for (int64_t d = 0; d < t->dim(); ++d) {
        Tensor column = Tensor::make(ScalarType::Long, {int64_t(coords.size())});
        for (size_t k = 0; k < coords.size(); ++k) column.ptr<int64_t>()[k] = coords[k][d];
        expanded.emplace_back(std::move(column));
      }
      continue;
    }
    checkIndexDtype(*t, "index");
    expanded.emplace_back(*t);
  }
  if (expanded.size() > size_t(self.dim())) fail("too many indices for a tensor of rank " + std::to_string(self.dim()));
  expanded.resize(size_t(self.dim()));

  IndexPlan plan;
  plan.indexed.assign(size_t(self.dim()), false);
  plan.index.resize(size_t(self.dim()));
  for (size_t d = 0; d < expanded.size(); ++d) plan.indexed[d] = expanded[d].has_value();
  bool first = true;
  for (size_t d = 0; d < expanded.size(); ++d)
    if (expanded[d]) {
      plan.broadcast = first ? expanded[d]->sizes : broadcastShape(plan.broadcast, expanded[d]->sizes);
      first = false;
    }
  if (first) fail("index needs at least one index tensor");
  for (size_t d = 0; d < expanded.size(); ++d) {
    if (!expanded[d]) continue;
    std::vector<int64_t> &values = plan.index[d];
    LoadFn<int64_t> load = loaderFor<int64_t>(expanded[d]->dtype);
    forEachElement(plan.broadcast, std::array<Operand, 1>{operandFor(*expanded[d], plan.broadcast)},
                   [&](const std::array<uint8_t *, 1> &p) { values.push_back(wrapIndex(load(p[0]), self.sizes[d])); });
  }
  // Adjacent indexed dims keep their place; separated ones move to the front.
  int64_t firstIndexed = -1, lastIndexed = -1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (plan.indexed[d]) {
      if (firstIndexed < 0) firstIndexed = d;
      lastIndexed = d;
    }
  bool adjacent = true;
  for (int64_t d = firstIndexed; d <= lastIndexed; ++d) adjacent &= bool(plan.indexed[d]);
  plan.insertAt = adjacent ? firstIndexed : 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (adjacent && d == firstIndexed) plan.resultSizes.insert(plan.resultSizes.end(), plan.broadcast.begin(), plan.broadcast.end());
    if (!plan.indexed[d]) plan.resultSizes.push_back(self.sizes[d]);
  }
  if (!adjacent) plan.resultSizes.insert(plan.resultSizes.begin(), plan.broadcast.begin(), plan.broadcast.end());
  return plan;
}

/// Calls f(result linear index, byte offset in a tensor with `byteStrides`
/// and self's sizes) for every element of the indexing result.
template <typename F> void forEachIndexed(const IndexPlan &plan, const std::vector<int64_t> &byteStrides, F f) {
  const int64_t nb = int64_t(plan.broadcast.size());
  int64_t linear = 0;
  forEachIndex(plan.resultSizes, [&](const std::vector<int64_t> &r) {
    int64_t b = 0; // linear index into the broadcast shape
    for (int64_t k = 0; k < nb; ++k) b = b * plan.broadcast[k] + r[plan.insertAt + k];
    int64_t offset = 0, pos = 0;
    for (size_t d = 0; d < plan.indexed.size(); ++d) {
      if (plan.indexed[d]) {
        offset += plan.index[d][size_t(b)] * byteStrides[d];
      } else {
        if (pos == plan.insertAt) pos += nb;
        offset += r[pos++] * byteStrides[d];
      }
    }
    f(linear++, offset);
  });
}

void index(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  checkSameDtype(self, out, "self", "out");
  IndexPlan plan = planIndex(self, optionalTensorListArg(args, 1));
  Tensor result = Tensor::make(self.dtype, plan.resultSizes);
  size_t esize = elementSize(self.dtype);
  forEachIndexed(plan, View::of(self).byteStrides, [&](int64_t linear, int64_t offset) {
    std::memcpy(result.data + size_t(linear) * esize, self.data + offset, esize);
  });
  out.resize(plan.resultSizes);
  copyInto(out, result);
}

void indexPut(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &values = tensorArg(args, 2);
  bool accumulate = boolArg(args, 3);
  Tensor &out = tensorArg(args, 4);
  checkSameDtype(self, out, "self", "out");
  checkSameDtype(self, values, "self", "values");
  IndexPlan plan = planIndex(self, optionalTensorListArg(args, 1));
  out.resize(self.sizes);
  copyInto(out, self);
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> v;
    LoadFn<C> load = loaderFor<C>(values.dtype);
    forEachElement(plan.resultSizes, std::array<Operand, 1>{operandFor(values, plan.resultSizes)},
                   [&](const std::array<uint8_t *, 1> &p) { v.push_back(load(p[0])); });
    LoadFn<C> loadOut = loaderFor<C>(out.dtype);
    StoreFn<C> store = storerFor<C>(out.dtype);
    forEachIndexed(plan, View::of(out).byteStrides, [&](int64_t linear, int64_t offset) {
      uint8_t *p = out.data + offset;
      store(p, accumulate ? C(loadOut(p) + v[size_t(linear)]) : v[size_t(linear)]);
    });
  });
}

void indexSelect(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &indexT = tensorArg(args, 2);
  Tensor &out = tensorArg(args, 3);
  checkSameDtype(self, out, "self", "out");
  checkIndexDtype(indexT, "index");
  if (indexT.dim() > 1) fail("index must be 0-d or 1-d, got " + sizesText(indexT.sizes));
  int64_t dim = wrapDim(intArg(args, 1), self.dim());
  std::vector<int64_t> idx = toVector<int64_t>(indexT), sizes = self.sizes;
  if (self.dim() == 0) {
    if (idx.size() != 1) fail("index_select of a 0-d tensor needs one index");
    wrapIndex(idx[0], 1);
    out.resize({});
    copyInto(out, self);
    return;
  }
  sizes[dim] = int64_t(idx.size());
  out.resize(sizes);
  checkSameDimOrder({&self, &out});
  View src = View::of(self), dst = View::of(out);
  for (size_t i = 0; i < idx.size(); ++i)
    copyView(dst.selected(dim, int64_t(i)), src.selected(dim, wrapIndex(idx[i], self.sizes[dim])));
}

/// gather/scatter: for each element of `index`, the byte offset in a tensor
/// of `sizes`/`byteStrides` with coordinate `dim` replaced by the index value.
template <typename F>
void forEachScatterIndex(const Tensor &indexT, int64_t dim, const std::vector<int64_t> &sizes,
                         const std::vector<int64_t> &byteStrides, F f) {
  checkIndexDtype(indexT, "index");
  std::vector<int64_t> idx = toVector<int64_t>(indexT);
  if (indexT.dim() != int64_t(sizes.size()) && !(indexT.dim() <= 1 && sizes.size() <= 1))
    fail("index " + sizesText(indexT.sizes) + " must have the rank of self " + sizesText(sizes));
  size_t i = 0;
  forEachIndex(indexT.sizes, [&](const std::vector<int64_t> &coords) {
    int64_t offset = 0;
    for (size_t d = 0; d < coords.size(); ++d) {
      int64_t c = int64_t(d) == dim ? wrapIndex(idx[i], sizes.empty() ? 1 : sizes[d]) : coords[d];
      if (int64_t(d) != dim && c >= sizes[d])
        fail("index " + sizesText(indexT.sizes) + " is larger than self " + sizesText(sizes) + " outside dim " + std::to_string(dim));
      offset += c * (byteStrides.empty() ? 0 : byteStrides[d]);
    }
    f(coords, offset);
    ++i;
  });
}

void gather(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &indexT = tensorArg(args, 2);
  Tensor &out = tensorArg(args, 4);
  checkSameDtype(self, out, "self", "out");
  int64_t dim = wrapDim(intArg(args, 1), self.dim());
  Tensor result = Tensor::make(self.dtype, indexT.sizes);
  size_t esize = elementSize(self.dtype), linear = 0;
  forEachScatterIndex(indexT, dim, self.sizes, View::of(self).byteStrides, [&](const auto &, int64_t offset) {
    std::memcpy(result.data + linear++ * esize, self.data + offset, esize);
  });
  out.resize(indexT.sizes);
  copyInto(out, result);
}

/// scatter / scatter_add: out = self, then out[index] = (or +=) src or value.
void scatter(std::span<Value *> args, bool add) {
  const Tensor &self = tensorArg(args, 0), &indexT = tensorArg(args, 2);
  Tensor &out = tensorArg(args, 4);
  checkSameDtype(self, out, "self", "out");
  int64_t dim = wrapDim(intArg(args, 1), self.dim());
  out.resize(self.sizes);
  copyInto(out, self);
  const Tensor *src = args[3]->isTensor() ? &args[3]->toTensor() : nullptr;
  switchCompute(self.dtype, [&]<typename C>() {
    C value = src ? C(0) : Scalar::of(*args[3]).template as<C>();
    std::vector<C> srcValues;
    std::vector<int64_t> srcStrides;
    if (src) {
      srcValues = toVector<C>(*src);
      srcStrides.assign(size_t(src->dim()), 1);
      for (int64_t d = src->dim() - 2; d >= 0; --d) srcStrides[d] = srcStrides[d + 1] * src->sizes[d + 1];
    }
    LoadFn<C> load = loaderFor<C>(out.dtype);
    StoreFn<C> store = storerFor<C>(out.dtype);
    forEachScatterIndex(indexT, dim, out.sizes, View::of(out).byteStrides, [&](const std::vector<int64_t> &coords, int64_t offset) {
      C v = value;
      if (src) {
        int64_t at = 0;
        for (size_t d = 0; d < coords.size(); ++d) {
          if (coords[d] >= src->sizes[d]) fail("index " + sizesText(indexT.sizes) + " is larger than src " + sizesText(src->sizes));
          at += coords[d] * srcStrides[d];
        }
        v = srcValues[size_t(at)];
      }
      uint8_t *p = out.data + offset;
      store(p, add ? C(load(p) + v) : v);
    });
  });
}

void embedding(std::span<Value *> args) {
  const Tensor &weight = tensorArg(args, 0), &indices = tensorArg(args, 1);
  Tensor &out = tensorArg(args, 5);
  checkSameDtype(weight, out, "weight", "out");
  checkIndexDtype(indices, "indices");
  if (weight.dim() != 2) fail("weight must be 2-d, got " + sizesText(weight.sizes));
  std::vector<int64_t> sizes = indices.sizes, idx = toVector<int64_t>(indices);
  sizes.push_back(weight.sizes[1]);
  out.resize(sizes);
  checkContiguous({&out});
  View rows = View::of(weight);
  View dst = View::of(out);
  dst.sizes = {int64_t(idx.size()), weight.sizes[1]};
  dst.byteStrides = {weight.sizes[1] * int64_t(elementSize(out.dtype)), int64_t(elementSize(out.dtype))};
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= weight.sizes[0])
      fail("index " + std::to_string(idx[i]) + " is out of range for " + std::to_string(weight.sizes[0]) + " embeddings");
    copyView(dst.selected(0, int64_t(i)), rows.selected(0, idx[i]));
  }
}

void nonzero(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 1);
  checkDtype(out, ScalarType::Long, "out");
  auto coords = nonzeroCoords(self);
  std::vector<int64_t> flat;
  for (const auto &c : coords) flat.insert(flat.end(), c.begin(), c.end());
  out.resize({int64_t(coords.size()), self.dim()});
  writeValues(out, flat);
}

KernelRegistration registration({
    {"aten::index.Tensor_out", [](auto args) { index(args); }},
    {"aten::index_put.out", [](auto args) { indexPut(args); }},
    {"aten::index_select.out", [](auto args) { indexSelect(args); }},
    {"aten::gather.out", [](auto args) { gather(args); }},
    {"aten::scatter.src_out", [](auto args) { scatter(args, false); }},
    {"aten::scatter.value_out", [](auto args) { scatter(args, false); }},
    {"aten::scatter_add.out", [](auto args) { scatter(args, true); }},
    {"aten::embedding.out", [](auto args) { embedding(args); }},
    {"aten::nonzero.out", [](auto args) { nonzero(args); }},
});

} // namespace
} // namespace exir::run::kern
