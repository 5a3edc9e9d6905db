//===- Run/Kernels/DimOrderOps.cpp - dim_order_ops:: copies ---------------===//
//
// ExecuTorch's dim-order ops, which replace to(dtype), clone and empty with
// explicit memory layouts: out is laid out in `dim_order` (None keeps self's)
// and takes its dtype from out itself.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

/// Lays out `out` (already sized) in the requested dim order.
void applyDimOrder(Tensor &out, std::span<Value *> args, size_t dimOrderIdx, const std::vector<uint8_t> &fallback) {
  bool present = false;
  std::vector<int64_t> order = intListArg(args, dimOrderIdx, &present);
  if (!present) {
    if (fallback.size() == out.sizes.size()) out.dimOrder = fallback;
    return;
  }
  if (int64_t(order.size()) != out.dim())
    fail("dim_order " + sizesText(order) + " does not match the rank " + std::to_string(out.dim()));
  std::vector<bool> seen(order.size());
  std::vector<uint8_t> dimOrder;
  for (int64_t d : order) {
    if (d < 0 || d >= out.dim() || seen[d]) fail("dim_order " + sizesText(order) + " is not a permutation");
    seen[d] = true;
    dimOrder.push_back(uint8_t(d));
  }
  out.dimOrder = dimOrder;
}

void toDimOrderCopy(std::span<Value *> args, bool sameDtype) {
  const Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 3);
  if (sameDtype) checkSameDtype(self, out, "self", "out");
  out.resize(self.sizes);
  applyDimOrder(out, args, 2, self.dimOrder);
  copyInto(out, self);
}

KernelRegistration registration({
    {"dim_order_ops::_to_dim_order_copy.out", [](auto args) { toDimOrderCopy(args, false); }},
    {"dim_order_ops::_clone_dim_order.out", [](auto args) { toDimOrderCopy(args, true); }},
    {"dim_order_ops::_empty_dim_order.out", [](auto args) {
       Tensor &out = tensorArg(args, 2);
       out.resize(intListArg(args, 0));
       applyDimOrder(out, args, 1, {});
     }},
});

} // namespace
} // namespace exir::run::kern
