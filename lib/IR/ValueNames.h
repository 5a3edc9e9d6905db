//===- IR/ValueNames.h - Visit the value names of an argument ---*- C++ -*-===//
//
// Argument::collectTensorNames / collectValueNames copy every name into a
// vector; passes that look at every use of a 100k-node graph call these
// instead, which hand out references into the argument, in the same order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

namespace exir {

/// Calls f(const std::string &) for every tensor name of `arg`, as
/// Argument::collectTensorNames lists them.
template <typename F> void forEachTensorName(const Argument &arg, F &&f) {
  switch (arg.kind) {
  case ArgKind::Tensor: f(arg.name); break;
  case ArgKind::OptionalTensor:
    if (!arg.name.empty()) f(arg.name);
    break;
  case ArgKind::Tensors:
  case ArgKind::OptionalTensors:
    for (const auto &n : arg.names)
      if (!n.empty()) f(n);
    break;
  case ArgKind::NestedTensors:
    for (const auto &l : arg.nestedTensors)
      for (const auto &n : l) f(n);
    break;
  case ArgKind::StringToArgument:
    for (const auto &[k, v] : arg.mapping) forEachTensorName(v, f);
    break;
  default: break;
  }
}

/// Tensor names, then the names of symbolic values, as
/// Argument::collectValueNames lists them.
template <typename F> void forEachValueName(const Argument &arg, F &&f) {
  forEachTensorName(arg, f);
  switch (arg.kind) {
  case ArgKind::SymInt: case ArgKind::SymInts: case ArgKind::SymBool: case ArgKind::SymBools:
  case ArgKind::SymFloat: case ArgKind::SymFloats:
    for (const auto &sym : arg.syms)
      if (sym.isName) f(sym.name);
    break;
  default: break;
  }
}

} // namespace exir
