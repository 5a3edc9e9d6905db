//===- Run/Kernels/Softmax.cpp - _softmax, _log_softmax -------------------===//
//
// Stable forms: the row maximum is subtracted before exp, so large inputs do
// not overflow. As PyTorch's CPU kernel, softmax multiplies by the reciprocal
// of the sum; both compute in the input's float type.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

template <bool Log> void softmax(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  int64_t dim = wrapDim(intArg(args, 1), self.dim());
  bool halfToFloat = boolArg(args, 2);
  Tensor &out = tensorArg(args, 3);
  checkFloating(self, "self");
  if (halfToFloat) fail("half_to_float is only supported on CUDA");
  checkSameDtype(self, out, "self", "out");
  out.resize(self.sizes);
  checkSameDimOrder({&self, &out});
  // Rows along `dim`: move it last.
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d != dim) perm.push_back(d);
  if (self.dim() > 0) perm.push_back(dim);
  int64_t n = self.dim() > 0 ? self.sizes[dim] : 1;
  if (n == 0) return;
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> values = viewValues<C>(View::of(self).permuted(perm));
    for (size_t start = 0; start < values.size(); start += size_t(n)) {
      C *row = &values[start];
      C mx = row[0];
      for (int64_t i = 1; i < n; ++i) mx = std::max(mx, row[i]);
      C sum = 0;
      if constexpr (Log) {
        for (int64_t i = 0; i < n; ++i) sum += std::exp(row[i] - mx);
        C logSum = std::log(sum);
        for (int64_t i = 0; i < n; ++i) row[i] = row[i] - mx - logSum;
      } else {
        for (int64_t i = 0; i < n; ++i) sum += row[i] = std::exp(row[i] - mx);
        C inv = C(1) / sum;
        for (int64_t i = 0; i < n; ++i) row[i] *= inv;
      }
    }
    writeView(View::of(out).permuted(perm), values);
  });
}

KernelRegistration registration({
    {"aten::_softmax.out", [](auto args) { softmax<false>(args); }},
    {"aten::_log_softmax.out", [](auto args) { softmax<true>(args); }},
});

} // namespace
} // namespace exir::run::kern
