//===- Run/Kernels/LinearAlgebra.cpp - mm, bmm, addmm ---------------------===//
//
// Matrix products accumulate in the computation type of the dtype (float for
// float32, as the CPU BLAS PyTorch calls does), looping i-k-j so the inner
// loop runs over contiguous rows.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

/// out[b] = a[b] @ m[b] for `batches` row-major [n,k] x [k,p] products, in C.
template <typename C>
std::vector<C> matmul(const std::vector<C> &a, const std::vector<C> &m, int64_t batches, int64_t n, int64_t k, int64_t p) {
  std::vector<C> out(size_t(batches * n * p), C(0));
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < n; ++i) {
      C *row = &out[size_t((b * n + i) * p)];
      for (int64_t q = 0; q < k; ++q) {
        C x = a[size_t((b * n + i) * k + q)];
        const C *mrow = &m[size_t((b * k + q) * p)];
        for (int64_t j = 0; j < p; ++j) row[j] += x * mrow[j];
      }
    }
  return out;
}

void checkMatrices(const Tensor &a, const Tensor &b, const Tensor &out, int64_t rank) {
  if (a.dim() != rank || b.dim() != rank)
    fail("expected rank-" + std::to_string(rank) + " tensors, got " + sizesText(a.sizes) + " and " + sizesText(b.sizes));
  checkSameDtype(a, b, "self", "mat2");
  checkSameDtype(a, out, "self", "out");
  if (a.sizes[rank - 1] != b.sizes[rank - 2])
    fail("shapes " + sizesText(a.sizes) + " and " + sizesText(b.sizes) + " cannot be multiplied");
  if (rank == 3 && a.sizes[0] != b.sizes[0]) fail("batch sizes " + std::to_string(a.sizes[0]) + " and " + std::to_string(b.sizes[0]) + " differ");
}

void mm(std::span<Value *> args) {
  const Tensor &a = tensorArg(args, 0), &b = tensorArg(args, 1);
  Tensor &out = tensorArg(args, 2);
  checkMatrices(a, b, out, 2);
  out.resize({a.sizes[0], b.sizes[1]});
  switchCompute(a.dtype, [&]<typename C>() {
    writeValues(out, matmul(toVector<C>(a), toVector<C>(b), 1, a.sizes[0], a.sizes[1], b.sizes[1]));
  });
}

void bmm(std::span<Value *> args) {
  const Tensor &a = tensorArg(args, 0), &b = tensorArg(args, 1);
  Tensor &out = tensorArg(args, 2);
  checkMatrices(a, b, out, 3);
  out.resize({a.sizes[0], a.sizes[1], b.sizes[2]});
  switchCompute(a.dtype, [&]<typename C>() {
    writeValues(out, matmul(toVector<C>(a), toVector<C>(b), a.sizes[0], a.sizes[1], a.sizes[2], b.sizes[2]));
  });
}

void addmm(std::span<Value *> args) {
  const Tensor &self = tensorArg(args, 0), &a = tensorArg(args, 1), &b = tensorArg(args, 2);
  Scalar beta = scalarArg(args, 3), alpha = scalarArg(args, 4);
  Tensor &out = tensorArg(args, 5);
  checkMatrices(a, b, out, 2);
  checkSameDtype(self, a, "self", "mat1");
  std::vector<int64_t> shape{a.sizes[0], b.sizes[1]};
  if (broadcastShape(self.sizes, shape) != shape)
    fail("self " + sizesText(self.sizes) + " does not broadcast to " + sizesText(shape));
  out.resize(shape);
  switchCompute(a.dtype, [&]<typename C>() {
    std::vector<C> product = matmul(toVector<C>(a), toVector<C>(b), 1, a.sizes[0], a.sizes[1], b.sizes[1]);
    C be = beta.as<C>(), al = alpha.as<C>();
    // beta == 0 ignores self entirely (NaN in self does not propagate).
    if (be != C(0)) {
      LoadFn<C> load = loaderFor<C>(self.dtype);
      size_t i = 0;
      forEachElement(shape, std::array<Operand, 1>{operandFor(self, shape)}, [&](const std::array<uint8_t *, 1> &p) {
        product[i] = be * load(p[0]) + al * product[i];
        ++i;
      });
    } else if (al != C(1)) {
      for (C &v : product) v *= al;
    }
    writeValues(out, product);
  });
}

KernelRegistration registration({
    {"aten::mm.out", [](auto args) { mm(args); }},
    {"aten::bmm.out", [](auto args) { bmm(args); }},
    {"aten::addmm.out", [](auto args) { addmm(args); }},
});

} // namespace
} // namespace exir::run::kern
