//===- Run/Kernels/Creation.cpp - arange, full, zeros, fill, _to_copy -----===//
//
// Factory ops write their out tensor (whose dtype carries the factory's
// dtype argument). arange computes start + i * step in double for floating
// outs and in int64 for integral ones, with PyTorch's length rule.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

/// A float value filled into an integral tensor truncates, as in PyTorch.
void fillWith(Tensor &out, const Scalar &value) {
  switchDtype(out.dtype, [&]<typename T>() {
    T v = value.as<T>();
    std::fill(out.ptr<T>(), out.ptr<T>() + out.numel(), v);
  });
}

void arange(const Scalar &start, const Scalar &end, const Scalar &step, Tensor &out) {
  double s = start.as<double>(), e = end.as<double>(), st = step.as<double>();
  if (st == 0) fail("step must be nonzero");
  if ((st > 0 && e < s) || (st < 0 && e > s)) fail("upper bound and larger bound inconsistent with step sign");
  bool integral = !start.isFloating() && !end.isFloating() && !step.isFloating();
  int64_t n = integral ? (end.as<int64_t>() - start.as<int64_t>() + step.as<int64_t>() - (st > 0 ? 1 : -1)) / step.as<int64_t>()
                       : int64_t(std::ceil((e - s) / st));
  out.resize({std::max<int64_t>(n, 0)});
  if (isFloatingType(out.dtype)) {
    std::vector<double> values(size_t(out.numel()));
    for (int64_t i = 0; i < out.numel(); ++i) values[i] = s + double(i) * st;
    writeValues(out, values);
  } else {
    if (!integral) fail("a floating range needs a floating out dtype, got " + dtypeText(out.dtype));
    std::vector<int64_t> values(size_t(out.numel()));
    for (int64_t i = 0; i < out.numel(); ++i) values[i] = start.as<int64_t>() + i * step.as<int64_t>();
    writeValues(out, values);
  }
}

void full(Tensor &out, const std::vector<int64_t> &sizes, const Scalar &value) {
  out.resize(sizes);
  fillWith(out, value);
}

/// *_like ops: out takes self's sizes (its own dtype and dim order).
void fullLike(const Tensor &self, Tensor &out, const Scalar &value) {
  out.resize(self.sizes);
  fillWith(out, value);
}

KernelRegistration registration({
    {"aten::arange.out", [](auto args) {
       arange(Scalar::ofInt(0), scalarArg(args, 0), Scalar::ofInt(1), tensorArg(args, 1));
     }},
    {"aten::arange.start_out", [](auto args) {
       arange(scalarArg(args, 0), scalarArg(args, 1), scalarArg(args, 2), tensorArg(args, 3));
     }},
    {"aten::full.out", [](auto args) { full(tensorArg(args, 2), intListArg(args, 0), scalarArg(args, 1)); }},
    {"aten::zeros.out", [](auto args) { full(tensorArg(args, 1), intListArg(args, 0), Scalar::ofInt(0)); }},
    {"aten::ones.out", [](auto args) { full(tensorArg(args, 1), intListArg(args, 0), Scalar::ofInt(1)); }},
    {"aten::empty.out", [](auto args) { full(tensorArg(args, 2), intListArg(args, 0), Scalar::ofInt(0)); }},
    {"aten::full_like.out", [](auto args) { fullLike(tensorArg(args, 0), tensorArg(args, 3), scalarArg(args, 1)); }},
    {"aten::zeros_like.out", [](auto args) { fullLike(tensorArg(args, 0), tensorArg(args, 2), Scalar::ofInt(0)); }},
    {"aten::ones_like.out", [](auto args) { fullLike(tensorArg(args, 0), tensorArg(args, 2), Scalar::ofInt(1)); }},
    {"aten::empty_like.out", [](auto args) { fullLike(tensorArg(args, 0), tensorArg(args, 2), Scalar::ofInt(0)); }},
    {"aten::scalar_tensor.out", [](auto args) { full(tensorArg(args, 1), {}, scalarArg(args, 0)); }},
    {"aten::fill.Scalar_out", [](auto args) { fullLike(tensorArg(args, 0), tensorArg(args, 2), scalarArg(args, 1)); }},
    {"aten::fill.Tensor_out", [](auto args) {
       const Tensor &value = tensorArg(args, 1);
       if (value.dim() != 0) fail("fill value must be a 0-d tensor, got " + sizesText(value.sizes));
       Scalar s = isFloatingType(value.dtype) ? Scalar::ofDouble(toVector<double>(value)[0])
                                              : Scalar::ofInt(toVector<int64_t>(value)[0]);
       fullLike(tensorArg(args, 0), tensorArg(args, 2), s);
     }},
    {"aten::_to_copy.out", [](auto args) {
       const Tensor &self = tensorArg(args, 0);
       Tensor &out = tensorArg(args, 3);
       out.resize(self.sizes);
       copyInto(out, self);
     }},
});

} // namespace
} // namespace exir::run::kern
