//===- Run/Kernels/Misc.cpp - glu, logit, cumprod, masked_scatter, ... ----===//
//
// Less common ops of the table: glu, logit, cumprod, masked_scatter,
// scatter_reduce, empty_strided, and native_dropout in its deterministic
// (inference or p = 0) form.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

void glu(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  checkFloating(self, "self");
  checkSameDtype(self, out, "self", "out");
  int64_t dim = wrapDim(intArg(args, 1), self.dim());
  if (self.dim() == 0 || self.sizes[dim] % 2) fail("glu halves dimension " + std::to_string(dim) + ", which must be even");
  int64_t half = self.sizes[dim] / 2;
  View a = View::of(self).sliced(dim, 0, half), b = View::of(self).sliced(dim, half, half);
  out.resize(a.sizes);
  checkSameDimOrder({&self, &out});
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> x = viewValues<C>(a), g = viewValues<C>(b);
    for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] * (C(1) / (C(1) + std::exp(-g[i])));
    writeValues(out, x);
  });
}

void logit(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  std::optional<double> eps = args[1]->isNone() ? std::nullopt : std::optional<double>(args[1]->toDouble());
  ScalarType compute = floatOpType(self.dtype);
  checkCanCast(compute, out.dtype);
  switchCompute(compute, [&]<typename C>() {
    mapElementwise<C, C, 1>(out, {&self}, [&](C x) {
      if (eps) x = std::min(std::max(x, C(*eps)), C(1 - *eps));
      return C(std::log(x / (C(1) - x)));
    });
  });
}

void cumprod(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 3);
  if (!args[2]->isNone() && ScalarType(intArg(args, 2)) != out.dtype) fail("out dtype differs from dtype");
  int64_t dim = wrapDim(intArg(args, 1), self.dim());
  out.resize(self.sizes);
  checkSameDimOrder({&self, &out});
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d != dim) perm.push_back(d);
  if (self.dim()) perm.push_back(dim);
  int64_t n = self.dim() ? self.sizes[dim] : 1;
  if (n == 0) return;
  switchCompute(isFloatingType(out.dtype) ? out.dtype : ScalarType::Long, [&]<typename C>() {
    std::vector<C> x = viewValues<C>(View::of(self).permuted(perm));
    for (size_t start = 0; start < x.size(); start += size_t(n))
      for (int64_t i = 1; i < n; ++i) x[start + i] *= x[start + i - 1];
    writeView(View::of(out).permuted(perm), x);
  });
}

void maskedScatter(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &mask = tensorArg(args, 1), &source = tensorArg(args, 2);
  Tensor &out = tensorArg(args, 3);
  checkDtype(mask, ScalarType::Bool, "mask");
  checkSameDtype(self, out, "self", "out");
  checkSameDtype(self, source, "self", "source");
  std::vector<int64_t> shape = broadcastShape(self.sizes, mask.sizes);
  out.resize(shape);
  checkSameDimOrder({&self, &out});
  Operand s = operandFor(self, shape);
  copyView(View::of(out), View{s.data, shape, s.byteStrides, self.dtype});
  size_t esize = elementSize(self.dtype), next = 0;
  Tensor flat = Tensor::make(source.dtype, source.sizes);
  copyInto(flat, source);
  LoadFn<bool> loadMask = loaderFor<bool>(mask.dtype);
  std::array<Operand, 2> ops{operandFor(out, shape), operandFor(mask, shape)};
  forEachElement(shape, ops, [&](const std::array<uint8_t *, 2> &p) {
    if (!loadMask(p[1])) return;
    if (int64_t(next) >= source.numel()) fail("source has fewer elements than the mask selects");
    std::memcpy(p[0], flat.data + next++ * esize, esize);
  });
}

void scatterReduce(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &index = tensorArg(args, 2), &src = tensorArg(args, 3);
  auto reduce = optStringArg(args, 4).value_or("");
  bool includeSelf = boolArg(args, 5);
  Tensor &out = tensorArg(args, 6);
  checkSameDtype(self, out, "self", "out");
  checkSameDtype(self, src, "self", "src");
  if (index.dtype != ScalarType::Long) fail("index must be int64, got " + dtypeText(index.dtype));
  if (reduce != "sum" && reduce != "prod" && reduce != "mean" && reduce != "amax" && reduce != "amin")
    fail("reduce must be sum, prod, mean, amax or amin, got '" + reduce + "'");
  int64_t dim = wrapDim(intArg(args, 1), self.dim());
  out.resize(self.sizes);
  checkContiguous({&self, &out, &index, &src});
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> x = toVector<C>(self), s = toVector<C>(src);
    std::vector<int64_t> idx = toVector<int64_t>(index), count(x.size(), includeSelf ? 1 : 0);
    std::vector<int64_t> strides = self.strides(), srcStrides = src.strides();
    size_t i = 0;
    forEachIndex(index.sizes, [&](const std::vector<int64_t> &coords) {
      int64_t target = 0, from = 0;
      for (size_t d = 0; d < coords.size(); ++d) {
        int64_t c = int64_t(d) == dim ? idx[i] : coords[d];
        if (c < 0) c += self.sizes[d];
        if (c < 0 || c >= self.sizes[d]) fail("index " + std::to_string(idx[i]) + " is out of bounds");
        target += c * strides[d];
        from += coords[d] * srcStrides[d];
      }
      ++i;
      C v = s[size_t(from)];
      C &t = x[size_t(target)];
      if (count[target]++ == 0) t = v; // the first contribution replaces self when it is excluded
      else if (reduce == "sum" || reduce == "mean") t += v;
      else if (reduce == "prod") t *= v;
      else if (reduce == "amax") t = (v > t || v != v) ? v : t;
      else t = (v < t || v != v) ? v : t;
    });
    if (reduce == "mean")
      for (size_t j = 0; j < x.size(); ++j)
        if (count[j] > 1 || (!includeSelf && count[j] == 1))
          x[j] = std::is_floating_point_v<C> ? C(x[j] / C(count[j])) : C(floor(double(x[j]) / double(count[j])));
    writeValues(out, x);
  });
}

void nativeDropout(std::span<Value *> args) {
  const Tensor &input = tensorArg(args, 0);
  double p = args[1]->toDouble();
  bool train = !args[2]->isNone() && boolArg(args, 2);
  Tensor &out = tensorArg(args, 3), &mask = tensorArg(args, 4);
  if (train && p > 0) fail("training-mode dropout is random; the reference kernels only run it with p = 0");
  out.resize(input.sizes);
  copyInto(out, input);
  mask.resize(input.sizes);
  checkDtype(mask, ScalarType::Bool, "mask");
  std::fill(mask.ptr<bool>(), mask.ptr<bool>() + mask.numel(), true);
}

/// mse_loss: reduction 0 = none, 1 = mean, 2 = sum (at::Reduction).
void mseLoss(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &target = tensorArg(args, 1);
  int64_t reduction = intArg(args, 2);
  Tensor &out = tensorArg(args, 3);
  checkFloating(self, "self");
  checkSameDtype(self, out, "self", "out");
  if (reduction < 0 || reduction > 2) fail("reduction must be 0 (none), 1 (mean) or 2 (sum)");
  switchCompute(self.dtype, [&]<typename C>() {
    Tensor squared = Tensor::make(self.dtype, {});
    mapElementwise<C, C, 2>(squared, {&self, &target}, [](C a, C b) { return (a - b) * (a - b); });
    if (reduction == 0) {
      out.resize(squared.sizes);
      copyInto(out, squared);
      return;
    }
    std::vector<double> v = toVector<double>(squared);
    double sum = 0;
    for (double x : v) sum += x;
    out.resize({});
    writeValues(out, std::vector<C>{C(reduction == 1 ? sum / double(v.size()) : sum)});
  });
}

KernelRegistration registration({
    {"aten::mse_loss.out", [](auto args) { mseLoss(args); }},
    {"aten::glu.out", [](auto args) { glu(args); }},
    {"aten::logit.out", [](auto args) { logit(args); }},
    {"aten::cumprod.out", [](auto args) { cumprod(args); }},
    {"aten::masked_scatter.out", [](auto args) { maskedScatter(args); }},
    {"aten::scatter_reduce.two_out", [](auto args) { scatterReduce(args); }},
    {"aten::native_dropout.out", [](auto args) { nativeDropout(args); }},
    {"aten::empty_strided.out", [](auto args) {
       Tensor &out = tensorArg(args, 2);
       out.resize(intListArg(args, 0));
       std::memset(out.data, 0, out.nbytes());
     }},
});

} // namespace
} // namespace exir::run::kern
