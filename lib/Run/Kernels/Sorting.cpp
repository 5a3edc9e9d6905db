//===- Run/Kernels/Sorting.cpp - sort, topk -------------------------------===//
//
// Stable sorts along one dim; NaN orders above every number (as PyTorch
// sorts it), so it comes last ascending and first descending.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

#include <numeric>

namespace exir::run::kern {
namespace {

/// Sorts each row along `dim` and keeps the first `k` of each; writes values and indices.
void sortRows(const Tensor &self, int64_t dim, bool descending, int64_t k, Tensor &values, Tensor &indices) {
  checkSameDtype(self, values, "self", "values");
  checkDtype(indices, ScalarType::Long, "indices");
  int64_t n = self.dim() ? self.sizes[dim] : 1;
  if (k < 0 || k > n) fail("k (" + std::to_string(k) + ") is out of range for a dimension of " + std::to_string(n));
  std::vector<int64_t> sizes = self.sizes;
  if (self.dim()) sizes[dim] = k;
  values.resize(sizes);
  indices.resize(sizes);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d != dim) perm.push_back(d);
  if (self.dim()) perm.push_back(dim);
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> x = viewValues<C>(View::of(self).permuted(perm)), outValues;
    std::vector<int64_t> outIndices, order(static_cast<size_t>(n));
    auto before = [&](C a, C b) {
      bool aNan = a != a, bNan = b != b;
      if (aNan || bNan) return descending ? (aNan && !bNan) : (!aNan && bNan);
      return descending ? a > b : a < b;
    };
    for (size_t start = 0; start < x.size(); start += size_t(n)) {
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return before(x[start + a], x[start + b]); });
      for (int64_t i = 0; i < k; ++i) {
        outValues.push_back(x[start + size_t(order[i])]);
        outIndices.push_back(order[i]);
      }
    }
    writeView(View::of(values).permuted(perm), outValues);
    writeView(View::of(indices).permuted(perm), outIndices);
  });
}

KernelRegistration registration({
    {"aten::sort.values", [](auto args) {
       const Tensor &self = tensorArg(args, 0);
       int64_t dim = wrapDim(intArg(args, 1), self.dim());
       sortRows(self, dim, boolArg(args, 2), self.dim() ? self.sizes[dim] : 1, tensorArg(args, 3), tensorArg(args, 4));
     }},
    {"aten::topk.values", [](auto args) {
       // sorted=False may return any order; the sorted order is one of them.
       const Tensor &self = tensorArg(args, 0);
       sortRows(self, wrapDim(intArg(args, 2), self.dim()), boolArg(args, 3), intArg(args, 1), tensorArg(args, 5),
                tensorArg(args, 6));
     }},
});

} // namespace
} // namespace exir::run::kern
