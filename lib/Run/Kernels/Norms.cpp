//===- Run/Kernels/Norms.cpp - layer, group and batch norm ----------------===//
//
// Statistics (mean, biased variance) are computed in double over each
// normalized group; the output is (x - mean) * rstd * weight + bias in the
// input's computation type. Mean and rstd outputs have the shapes PyTorch
// gives them; the unused save_mean/save_invstd of inference batch norm are
// resized to [0] as in PyTorch.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

struct Moments {
  double mean = 0, var = 0; // biased variance
};
template <typename C> Moments momentsOf(const C *row, int64_t n) {
  Moments m;
  for (int64_t i = 0; i < n; ++i) m.mean += double(row[i]);
  m.mean /= double(std::max<int64_t>(n, 1));
  for (int64_t i = 0; i < n; ++i) m.var += (double(row[i]) - m.mean) * (double(row[i]) - m.mean);
  m.var /= double(std::max<int64_t>(n, 1));
  return m;
}

/// Per-channel parameter (weight/bias) as C, or `fallback` when absent.
template <typename C> std::vector<C> paramValues(const Tensor *t, int64_t n, C fallback, const char *what) {
  if (!t) return std::vector<C>(size_t(n), fallback);
  if (t->numel() != n) fail(std::string(what) + " has " + std::to_string(t->numel()) + " elements, expected " + std::to_string(n));
  return toVector<C>(*t);
}

void layerNorm(std::span<Value *> args) {
  const Tensor &input = tensorArg(args, 0);
  std::vector<int64_t> normalized = intListArg(args, 1);
  const Tensor *weight = args[2]->toOptionalTensor(), *bias = args[3]->toOptionalTensor();
  double eps = args[4]->toDouble();
  Tensor &out = tensorArg(args, 5), &meanOut = tensorArg(args, 6), &rstdOut = tensorArg(args, 7);
  checkFloating(input, "input");
  checkSameDtype(input, out, "input", "out");
  int64_t axis = input.dim() - int64_t(normalized.size());
  if (axis < 0 || !std::equal(normalized.begin(), normalized.end(), input.sizes.begin() + axis))
    fail("normalized_shape " + sizesText(normalized) + " does not match the end of input sizes " + sizesText(input.sizes));
  int64_t rowLength = 1;
  for (int64_t s : normalized) rowLength *= s;
  std::vector<int64_t> statSizes(input.sizes.begin(), input.sizes.begin() + axis);
  statSizes.resize(input.sizes.size(), 1);
  out.resize(input.sizes);
  checkSameDimOrder({&input, &out});
  meanOut.resize(statSizes);
  rstdOut.resize(statSizes);
  switchCompute(input.dtype, [&]<typename C>() {
    std::vector<C> x = toVector<C>(input), w = paramValues<C>(weight, rowLength, C(1), "weight"),
                   b = paramValues<C>(bias, rowLength, C(0), "bias");
    size_t rows = rowLength ? x.size() / size_t(rowLength) : 0;
    std::vector<C> means(rows), rstds(rows);
    for (size_t r = 0; r < rows; ++r) {
      C *row = &x[r * size_t(rowLength)];
      Moments m = momentsOf(row, rowLength);
      C mean = C(m.mean), rstd = C(1.0 / std::sqrt(m.var + eps));
      for (int64_t i = 0; i < rowLength; ++i) row[i] = (row[i] - mean) * rstd * w[i] + b[i];
      means[r] = mean;
      rstds[r] = rstd;
    }
    writeValues(out, x);
    writeValues(meanOut, means);
    writeValues(rstdOut, rstds);
  });
}

void groupNorm(std::span<Value *> args) {
  const Tensor &input = tensorArg(args, 0);
  const Tensor *weight = args[1]->toOptionalTensor(), *bias = args[2]->toOptionalTensor();
  int64_t n = intArg(args, 3), c = intArg(args, 4), hxw = intArg(args, 5), groups = intArg(args, 6);
  double eps = args[7]->toDouble();
  Tensor &out = tensorArg(args, 8), &meanOut = tensorArg(args, 9), &rstdOut = tensorArg(args, 10);
  checkFloating(input, "input");
  checkSameDtype(input, out, "input", "out");
  if (groups <= 0 || c % groups != 0) fail("C = " + std::to_string(c) + " is not divisible by group = " + std::to_string(groups));
  if (input.numel() != n * c * hxw) fail("input sizes " + sizesText(input.sizes) + " do not match N, C, HxW");
  out.resize(input.sizes);
  checkSameDimOrder({&input, &out});
  meanOut.resize({n, groups});
  rstdOut.resize({n, groups});
  int64_t perGroup = c / groups, rowLength = perGroup * hxw;
  switchCompute(input.dtype, [&]<typename C>() {
    std::vector<C> x = toVector<C>(input), w = paramValues<C>(weight, c, C(1), "weight"),
                   b = paramValues<C>(bias, c, C(0), "bias");
    std::vector<C> means(size_t(n * groups)), rstds(size_t(n * groups));
    for (int64_t r = 0; r < n * groups; ++r) {
      C *row = &x[size_t(r * rowLength)];
      Moments m = momentsOf(row, rowLength);
      C mean = C(m.mean), rstd = C(1.0 / std::sqrt(m.var + eps));
      for (int64_t i = 0; i < rowLength; ++i) {
        int64_t channel = (r % groups) * perGroup + i / std::max<int64_t>(hxw, 1);
        row[i] = (row[i] - mean) * rstd * w[channel] + b[channel];
      }
      means[r] = mean;
      rstds[r] = rstd;
    }
    writeValues(out, x);
    writeValues(meanOut, means);
    writeValues(rstdOut, rstds);
  });
}

/// The input viewed channel-major: [C, N, spatial...], one row per channel.
std::vector<int64_t> channelMajor(const Tensor &t) {
  if (t.dim() < 2) fail("batch norm needs an input of rank 2 or more, got " + sizesText(t.sizes));
  std::vector<int64_t> perm{1, 0};
  for (int64_t d = 2; d < t.dim(); ++d) perm.push_back(d);
  return perm;
}

/// out = x * alpha[c] + beta[c] (PyTorch's inference form), rows per channel.
template <typename C>
void applyPerChannel(const Tensor &input, Tensor &out, const std::vector<C> &alpha, const std::vector<C> &beta) {
  std::vector<int64_t> perm = channelMajor(input);
  std::vector<C> x = viewValues<C>(View::of(input).permuted(perm));
  size_t rowLength = alpha.empty() ? 0 : x.size() / alpha.size();
  for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] * alpha[i / rowLength] + beta[i / rowLength];
  writeView(View::of(out).permuted(perm), x);
}

void batchNormInference(const Tensor &input, const Tensor *weight, const Tensor *bias, const Tensor &runningMean,
                        const Tensor &runningVar, double eps, Tensor &out) {
  checkFloating(input, "input");
  checkSameDtype(input, out, "input", "out");
  out.resize(input.sizes);
  checkSameDimOrder({&input, &out});
  int64_t c = input.sizes[1];
  switchCompute(input.dtype, [&]<typename C>() {
    std::vector<C> w = paramValues<C>(weight, c, C(1), "weight"), b = paramValues<C>(bias, c, C(0), "bias"),
                   mean = paramValues<C>(&runningMean, c, C(0), "running_mean"),
                   var = paramValues<C>(&runningVar, c, C(1), "running_var");
    std::vector<C> alpha(static_cast<size_t>(c)), beta(static_cast<size_t>(c));
    for (int64_t i = 0; i < c; ++i) {
      C invstd = C(1) / std::sqrt(var[i] + C(eps));
      alpha[i] = invstd * w[i];
      beta[i] = b[i] - mean[i] * alpha[i];
    }
    applyPerChannel(input, out, alpha, beta);
  });
}

/// Training batch norm: batch statistics; running stats updated when given.
void batchNormTraining(const Tensor &input, const Tensor *weight, const Tensor *bias, Tensor *runningMean,
                       Tensor *runningVar, double momentum, double eps, Tensor &out, Tensor &saveMean, Tensor &saveInvstd) {
  checkFloating(input, "input");
  checkSameDtype(input, out, "input", "out");
  out.resize(input.sizes);
  checkSameDimOrder({&input, &out});
  int64_t c = input.sizes[1];
  saveMean.resize({c});
  saveInvstd.resize({c});
  switchCompute(input.dtype, [&]<typename C>() {
    std::vector<C> x = viewValues<C>(View::of(input).permuted(channelMajor(input)));
    int64_t rowLength = c ? int64_t(x.size()) / c : 0;
    std::vector<C> w = paramValues<C>(weight, c, C(1), "weight"), b = paramValues<C>(bias, c, C(0), "bias");
    std::vector<C> alpha(static_cast<size_t>(c)), beta(static_cast<size_t>(c)), means(static_cast<size_t>(c)), invstds(static_cast<size_t>(c));
    std::vector<double> unbiased(static_cast<size_t>(c));
    for (int64_t i = 0; i < c; ++i) {
      Moments m = momentsOf(&x[size_t(i * rowLength)], rowLength);
      means[i] = C(m.mean);
      invstds[i] = C(1.0 / std::sqrt(m.var + eps));
      unbiased[i] = rowLength > 1 ? m.var * double(rowLength) / double(rowLength - 1) : m.var;
      alpha[i] = invstds[i] * w[i];
      beta[i] = b[i] - means[i] * alpha[i];
    }
    applyPerChannel(input, out, alpha, beta);
    writeValues(saveMean, means);
    writeValues(saveInvstd, invstds);
    if (runningMean && runningVar) {
      std::vector<double> rm = toVector<double>(*runningMean), rv = toVector<double>(*runningVar);
      for (int64_t i = 0; i < c; ++i) {
        rm[i] = (1 - momentum) * rm[i] + momentum * double(means[i]);
        rv[i] = (1 - momentum) * rv[i] + momentum * unbiased[i];
      }
      writeValues(*runningMean, rm);
      writeValues(*runningVar, rv);
    }
  });
}

KernelRegistration registration({
    {"aten::native_layer_norm.out", [](auto args) { layerNorm(args); }},
    {"aten::native_group_norm.out", [](auto args) { groupNorm(args); }},
    {"aten::_native_batch_norm_legit_no_training.out", [](std::span<Value *> args) {
       batchNormInference(tensorArg(args, 0), args[1]->toOptionalTensor(), args[2]->toOptionalTensor(),
                          tensorArg(args, 3), tensorArg(args, 4), args[6]->toDouble(), tensorArg(args, 7));
       tensorArg(args, 8).resize({0});
       tensorArg(args, 9).resize({0});
     }},
    {"aten::_native_batch_norm_legit.out", [](std::span<Value *> args) {
       Tensor &runningMean = tensorArg(args, 3), &runningVar = tensorArg(args, 4);
       if (boolArg(args, 5)) {
         batchNormTraining(tensorArg(args, 0), args[1]->toOptionalTensor(), args[2]->toOptionalTensor(), &runningMean,
                           &runningVar, args[6]->toDouble(), args[7]->toDouble(), tensorArg(args, 8),
                           tensorArg(args, 9), tensorArg(args, 10));
       } else {
         batchNormInference(tensorArg(args, 0), args[1]->toOptionalTensor(), args[2]->toOptionalTensor(), runningMean,
                            runningVar, args[7]->toDouble(), tensorArg(args, 8));
         tensorArg(args, 9).resize({0});
         tensorArg(args, 10).resize({0});
       }
     }},
    {"aten::native_batch_norm.out", [](std::span<Value *> args) {
       Tensor *runningMean = args[3]->toOptionalTensor(), *runningVar = args[4]->toOptionalTensor();
       if (boolArg(args, 5)) {
         batchNormTraining(tensorArg(args, 0), args[1]->toOptionalTensor(), args[2]->toOptionalTensor(), runningMean,
                           runningVar, args[6]->toDouble(), args[7]->toDouble(), tensorArg(args, 8),
                           tensorArg(args, 9), tensorArg(args, 10));
         return;
       }
       if (!runningMean || !runningVar) fail("running_mean and running_var are needed when training is false");
       batchNormInference(tensorArg(args, 0), args[1]->toOptionalTensor(), args[2]->toOptionalTensor(), *runningMean,
                          *runningVar, args[7]->toDouble(), tensorArg(args, 8));
       tensorArg(args, 9).resize({0});
       tensorArg(args, 10).resize({0});
     }},
    {"aten::_native_batch_norm_legit.no_stats_out", [](std::span<Value *> args) {
       if (!boolArg(args, 3)) fail("without running stats, training must be true");
       batchNormTraining(tensorArg(args, 0), args[1]->toOptionalTensor(), args[2]->toOptionalTensor(), nullptr, nullptr,
                         args[4]->toDouble(), args[5]->toDouble(), tensorArg(args, 6), tensorArg(args, 7),
                         tensorArg(args, 8));
     }},
});

} // namespace
} // namespace exir::run::kern
