//===- Run/Kernels/Reductions.cpp - sum, mean, amax, argmax, var, ... -----===//
//
// Reductions over a list of dims (empty = all). Floating sums accumulate in
// double and are rounded once to the out dtype; integral sums in int64.
// amax/amin/max/argmax propagate NaN as PyTorch does (NaN is the maximum
// and the minimum; the first NaN wins).
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

#include <limits>

namespace exir::run::kern {
namespace {

/// The optional `dtype` argument: when given, out must have it.
void checkDtypeArg(std::span<Value *> args, size_t i, const Tensor &out) {
  if (args[i]->isNone()) return;
  auto dtype = ScalarType(args[i]->toInt());
  if (dtype != out.dtype) fail("out dtype " + dtypeText(out.dtype) + " differs from dtype " + dtypeText(dtype));
}

/// out[row] = f(row values as Acc, rowLength) for each output element.
template <typename F>
void reduce(const Tensor &self, Tensor &out, const std::vector<int64_t> &dims, bool keepdim, F f) {
  Reduction r = planReduction(self, dims, keepdim);
  out.resize(r.outSizes);
  auto run = [&]<typename Acc>() {
    std::vector<Acc> values = reductionRows<Acc>(self, r), result(size_t(r.rows));
    for (int64_t i = 0; i < r.rows; ++i) result[i] = f(&values[size_t(i * r.rowLength)], r.rowLength);
    writeValues(out, result);
  };
  if (isFloatingType(out.dtype) || isFloatingType(self.dtype)) run.template operator()<double>();
  else run.template operator()<int64_t>();
}

void sum(const Tensor &self, Tensor &out, const std::vector<int64_t> &dims, bool keepdim) {
  if (isFloatingType(self.dtype)) checkCanCast(self.dtype, out.dtype);
  reduce(self, out, dims, keepdim, [](const auto *row, int64_t n) {
    std::remove_cvref_t<decltype(*row)> acc = 0;
    for (int64_t i = 0; i < n; ++i) acc += row[i];
    return acc;
  });
}

void mean(const Tensor &self, Tensor &out, const std::vector<int64_t> &dims, bool keepdim) {
  checkFloating(out, "out");
  reduce(self, out, dims, keepdim, [](const auto *row, int64_t n) {
    double acc = 0;
    for (int64_t i = 0; i < n; ++i) acc += double(row[i]);
    return n ? acc / double(n) : std::numeric_limits<double>::quiet_NaN();
  });
}

void prod(const Tensor &self, Tensor &out, const std::vector<int64_t> &dims, bool keepdim) {
  reduce(self, out, dims, keepdim, [](const auto *row, int64_t n) {
    std::remove_cvref_t<decltype(*row)> acc = 1;
    for (int64_t i = 0; i < n; ++i) acc *= row[i];
    return acc;
  });
}

/// Index of the max (IsMax) or min of a row; NaN beats everything, first wins.
template <bool IsMax, typename T> int64_t extremeIndex(const T *row, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (row[best] != row[best]) break;
    if (row[i] != row[i] || (IsMax ? row[i] > row[best] : row[i] < row[best])) best = i;
  }
  return best;
}

template <bool IsMax> void extreme(const Tensor &self, Tensor &out, const std::vector<int64_t> &dims, bool keepdim) {
  checkSameDtype(self, out, "self", "out");
  Reduction r = planReduction(self, dims, keepdim);
  if (r.rowLength == 0 && r.rows > 0) fail("cannot reduce an empty dimension");
  out.resize(r.outSizes);
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> values = reductionRows<C>(self, r), result(size_t(r.rows));
    for (int64_t i = 0; i < r.rows; ++i) {
      const C *row = &values[size_t(i * r.rowLength)];
      result[i] = row[extremeIndex<IsMax>(row, r.rowLength)];
    }
    writeValues(out, result);
  });
}

/// argmax/argmin and max.dim/min.dim: indices (and values) along one dim, or
/// over the flattened tensor when dim is None.
template <bool IsMax>
void argExtreme(const Tensor &self, std::optional<int64_t> dim, bool keepdim, Tensor *values, Tensor &indices) {
  checkDtype(indices, ScalarType::Long, "indices");
  Reduction r = planReduction(self, dim ? std::vector<int64_t>{*dim} : std::vector<int64_t>{}, keepdim);
  if (!dim && !keepdim) r.outSizes = {};
  if (r.rowLength == 0 && r.rows > 0) fail("cannot reduce an empty dimension");
  indices.resize(r.outSizes);
  if (values) {
    checkSameDtype(self, *values, "self", "values");
    values->resize(r.outSizes);
  }
  switchCompute(self.dtype, [&]<typename C>() {
    std::vector<C> rows = reductionRows<C>(self, r), best(size_t(r.rows));
    std::vector<int64_t> index(size_t(r.rows));
    for (int64_t i = 0; i < r.rows; ++i) {
      const C *row = &rows[size_t(i * r.rowLength)];
      index[i] = extremeIndex<IsMax>(row, r.rowLength);
      best[i] = row[index[i]];
    }
    writeValues(indices, index);
    if (values) writeValues(*values, best);
  });
}

void anyOf(const Tensor &self, Tensor &out, const std::vector<int64_t> &dims, bool keepdim) {
  reduce(self, out, dims, keepdim, [](const auto *row, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      if (row[i] != 0) return decltype(row[0] + 0)(1);
    return decltype(row[0] + 0)(0);
  });
}

/// Variance with `correction` (1 = unbiased), two-pass in double.
void variance(const Tensor &self, Tensor &out, const std::vector<int64_t> &dims, double correction, bool keepdim) {
  checkFloating(self, "self");
  checkFloating(out, "out");
  reduce(self, out, dims, keepdim, [correction](const auto *row, int64_t n) {
    double m = 0, ss = 0;
    for (int64_t i = 0; i < n; ++i) m += double(row[i]);
    m /= double(n);
    for (int64_t i = 0; i < n; ++i) ss += (double(row[i]) - m) * (double(row[i]) - m);
    return ss / std::max(double(n) - correction, 0.0);
  });
}

void logsumexp(const Tensor &self, Tensor &out, const std::vector<int64_t> &dims, bool keepdim) {
  checkFloating(out, "out");
  reduce(self, out, dims, keepdim, [](const auto *row, int64_t n) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, double(row[i]));
    if (std::isinf(mx)) return mx;
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(double(row[i]) - mx);
    return mx + std::log(s);
  });
}

void vectorNorm(const Tensor &self, double ord, Tensor &out, const std::vector<int64_t> &dims, bool keepdim) {
  checkFloating(out, "out");
  reduce(self, out, dims, keepdim, [ord](const auto *row, int64_t n) {
    double acc = 0;
    if (std::isinf(ord)) {
      acc = ord > 0 ? 0 : std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < n; ++i)
        acc = ord > 0 ? std::max(acc, std::abs(double(row[i]))) : std::min(acc, std::abs(double(row[i])));
      return acc;
    }
    if (ord == 0) {
      for (int64_t i = 0; i < n; ++i) acc += row[i] != 0;
      return acc;
    }
    for (int64_t i = 0; i < n; ++i) acc += std::pow(std::abs(double(row[i])), ord);
    return ord == 1 ? acc : ord == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / ord);
  });
}

void cumsum(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 3);
  checkDtypeArg(args, 2, out);
  int64_t dim = wrapDim(intArg(args, 1), self.dim());
  out.resize(self.sizes);
  checkSameDimOrder({&self, &out});
  if (self.dim() == 0) {
    copyInto(out, self);
    return;
  }
  // Rows along `dim`: move it last in both views.
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d != dim) perm.push_back(d);
  perm.push_back(dim);
  int64_t n = self.sizes[dim];
  auto run = [&]<typename Acc>() {
    std::vector<Acc> values = viewValues<Acc>(View::of(self).permuted(perm));
    for (size_t start = 0; start < values.size(); start += size_t(n)) {
      Acc acc = 0;
      for (int64_t i = 0; i < n; ++i) values[start + i] = acc += values[start + i];
    }
    writeView(View::of(out).permuted(perm), values);
  };
  if (isFloatingType(out.dtype)) run.template operator()<double>();
  else run.template operator()<int64_t>();
}

std::vector<int64_t> dimsArg(std::span<Value *> args, size_t i) { return intListArg(args, i); }

KernelRegistration registration({
    {"aten::sum.IntList_out", [](auto args) {
       checkDtypeArg(args, 3, tensorArg(args, 4));
       sum(tensorArg(args, 0), tensorArg(args, 4), dimsArg(args, 1), boolArg(args, 2));
     }},
    {"aten::sum.out", [](auto args) {
       checkDtypeArg(args, 1, tensorArg(args, 2));
       sum(tensorArg(args, 0), tensorArg(args, 2), {}, false);
     }},
    {"aten::mean.out", [](auto args) {
       checkDtypeArg(args, 3, tensorArg(args, 4));
       mean(tensorArg(args, 0), tensorArg(args, 4), dimsArg(args, 1), boolArg(args, 2));
     }},
    {"aten::mean.dtype_out", [](auto args) {
       checkDtypeArg(args, 1, tensorArg(args, 2));
       mean(tensorArg(args, 0), tensorArg(args, 2), {}, false);
     }},
    {"aten::prod.out", [](auto args) {
       checkDtypeArg(args, 1, tensorArg(args, 2));
       prod(tensorArg(args, 0), tensorArg(args, 2), {}, false);
     }},
    {"aten::prod.int_out", [](auto args) {
       checkDtypeArg(args, 3, tensorArg(args, 4));
       prod(tensorArg(args, 0), tensorArg(args, 4), {intArg(args, 1)}, boolArg(args, 2));
     }},
    {"aten::amax.out", [](auto args) { extreme<true>(tensorArg(args, 0), tensorArg(args, 3), dimsArg(args, 1), boolArg(args, 2)); }},
    {"aten::amin.out", [](auto args) { extreme<false>(tensorArg(args, 0), tensorArg(args, 3), dimsArg(args, 1), boolArg(args, 2)); }},
    {"aten::max.unary_out", [](auto args) { extreme<true>(tensorArg(args, 0), tensorArg(args, 1), {}, false); }},
    {"aten::min.unary_out", [](auto args) { extreme<false>(tensorArg(args, 0), tensorArg(args, 1), {}, false); }},
    {"aten::argmax.out", [](auto args) {
       argExtreme<true>(tensorArg(args, 0), optIntArg(args, 1), boolArg(args, 2), nullptr, tensorArg(args, 3));
     }},
    {"aten::argmin.out", [](auto args) {
       argExtreme<false>(tensorArg(args, 0), optIntArg(args, 1), boolArg(args, 2), nullptr, tensorArg(args, 3));
     }},
    {"aten::max.dim_max", [](auto args) {
       argExtreme<true>(tensorArg(args, 0), intArg(args, 1), boolArg(args, 2), &tensorArg(args, 3), tensorArg(args, 4));
     }},
    {"aten::min.dim_min", [](auto args) {
       argExtreme<false>(tensorArg(args, 0), intArg(args, 1), boolArg(args, 2), &tensorArg(args, 3), tensorArg(args, 4));
     }},
    {"aten::any.all_out", [](auto args) { anyOf(tensorArg(args, 0), tensorArg(args, 1), {}, false); }},
    {"aten::any.out", [](auto args) { anyOf(tensorArg(args, 0), tensorArg(args, 3), {intArg(args, 1)}, boolArg(args, 2)); }},
    {"aten::any.dims_out", [](auto args) { anyOf(tensorArg(args, 0), tensorArg(args, 3), dimsArg(args, 1), boolArg(args, 2)); }},
    {"aten::var.correction_out", [](std::span<Value *> args) {
       std::optional<Scalar> correction = optScalarArg(args, 2);
       variance(tensorArg(args, 0), tensorArg(args, 4), dimsArg(args, 1), correction ? correction->as<double>() : 1.0,
                boolArg(args, 3));
     }},
    {"aten::var.out", [](auto args) {
       variance(tensorArg(args, 0), tensorArg(args, 4), dimsArg(args, 1), boolArg(args, 2) ? 1.0 : 0.0, boolArg(args, 3));
     }},
    {"aten::logsumexp.out", [](auto args) { logsumexp(tensorArg(args, 0), tensorArg(args, 3), dimsArg(args, 1), boolArg(args, 2)); }},
    {"aten::linalg_vector_norm.out", [](std::span<Value *> args) {
       checkDtypeArg(args, 4, tensorArg(args, 5));
       vectorNorm(tensorArg(args, 0), scalarArg(args, 1).as<double>(), tensorArg(args, 5), dimsArg(args, 2), boolArg(args, 3));
     }},
    {"aten::cumsum.out", [](auto args) { cumsum(args); }},
});

} // namespace
} // namespace exir::run::kern
