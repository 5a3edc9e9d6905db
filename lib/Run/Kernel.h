//===- Run/Kernel.h - Reference CPU kernels and their registry -*- C++ -*-===//
//
// A kernel is called with the runtime's KernelCall layout (see
// ../shared/spec/pte-format.md §3.5): every schema argument of the op's
// *out variant* (or of the op itself when it has no out form: sym ops,
// executorch_prim ops, copy_) in schema order, defaults included, then one
// return slot. For a single-out op the return slot is the same Value as `out`.
// Kernels resize their outputs with Tensor::resize (as the portable kernels
// call resize_tensor) and check what the portable kernels check (dtypes, dim
// orders of inputs and outputs agree), throwing exir::Error on failure.
//
// Registry keys are the runtime's kernel names: "aten::add.out",
// "aten::sym_size.int", "executorch_prim::add.Scalar",
// "quantized_decomposed::quantize_per_tensor.out", "dim_order_ops::_to_dim_order_copy.out".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Run/Value.h"

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace exir::run {

using KernelFn = std::function<void(std::span<Value *> args)>;

class KernelRegistry {
public:
  /// Every kernel linked into the tools (registered by the kernel files).
  static KernelRegistry &global();
  void add(std::string name, KernelFn fn);
  /// Null when no kernel has that name.
  const KernelFn *find(std::string_view name) const;
  std::vector<std::string> names() const; // sorted

private:
  std::vector<std::pair<std::string, KernelFn>> kernels_; // sorted by name after add
};

/// Registers kernels from a kernel file at static-initialization time:
///   static KernelRegistration reg({{"aten::add.out", addOut}, ...});
/// (Kernel files are linked with WHOLE_ARCHIVE or as an object library so the
/// registrations are not dropped by the linker.)
struct KernelRegistration {
  KernelRegistration(std::initializer_list<std::pair<const char *, KernelFn>> kernels);
};

} // namespace exir::run
