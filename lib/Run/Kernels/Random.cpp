//===- Run/Kernels/Random.cpp - rand, randn, randperm ---------------------===//
//
// A 64-bit Mersenne Twister with portable conversions (no std:: distribution,
// whose output differs between standard libraries): uniform doubles from the
// top 53 bits, normals by Box-Muller, permutations by Fisher-Yates.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/Random.h"
#include "Run/Kernels/KernelUtil.h"

#include <numbers>
#include <random>

namespace exir::run {
namespace {
std::mt19937_64 &generator() {
  static std::mt19937_64 engine(0);
  return engine;
}
/// Uniform in [0, 1).
double uniform() { return double(generator()() >> 11) * 0x1p-53; }
} // namespace

void seedRandomKernels(uint64_t seed) { generator().seed(seed); }

namespace kern {
namespace {

void randUniform(std::span<Value *> args) {
  Tensor &out = tensorArg(args, 1);
  checkFloating(out, "out");
  out.resize(intListArg(args, 0));
  std::vector<double> values(size_t(out.numel()));
  for (double &v : values) v = uniform();
  writeValues(out, values);
}

void randNormal(std::span<Value *> args) {
  Tensor &out = tensorArg(args, 1);
  checkFloating(out, "out");
  out.resize(intListArg(args, 0));
  std::vector<double> values(size_t(out.numel()));
  for (size_t i = 0; i < values.size(); i += 2) {
    double u1 = 1.0 - uniform(), u2 = uniform(); // u1 in (0, 1]: log is finite
    double r = std::sqrt(-2.0 * std::log(u1)), theta = 2.0 * std::numbers::pi * u2;
    values[i] = r * std::cos(theta);
    if (i + 1 < values.size()) values[i + 1] = r * std::sin(theta);
  }
  writeValues(out, values);
}

void randPermutation(std::span<Value *> args) {
  int64_t n = intArg(args, 0);
  Tensor &out = tensorArg(args, 1);
  if (n < 0) fail("n must not be negative, got " + std::to_string(n));
  out.resize({n});
  std::vector<int64_t> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[i] = i;
  for (int64_t i = n - 1; i > 0; --i) std::swap(values[i], values[int64_t(uniform() * double(i + 1))]);
  writeValues(out, values);
}

KernelRegistration registration({
    {"aten::rand.out", [](auto args) { randUniform(args); }},
    {"aten::randn.out", [](auto args) { randNormal(args); }},
    {"aten::randperm.out", [](auto args) { randPermutation(args); }},
});

} // namespace
} // namespace kern
} // namespace exir::run
