//===- Edge/SymSize.h - Arithmetic on symbolic sizes ------------*- C++ -*-===//
//
// Decompositions create values whose sizes are products or sums of the sizes
// they read (flatten of [s0, 4] is [s0*4]). Sizes are concrete ints or sympy
// srepr strings (Symbol('s0', ...), Mul(Integer(4), Symbol(...))), the form
// torch.export writes and exir-plan bounds; these helpers build new ones,
// folding concrete operands.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <vector>

namespace exir::edge {

SymInt symMul(const SymInt &a, const SymInt &b);
SymInt symAdd(const SymInt &a, const SymInt &b);
/// floor(a / b); b must be concrete and positive when a is symbolic.
SymInt symFloorDiv(const SymInt &a, const SymInt &b);
/// Product of the sizes (1 for an empty list).
SymInt symProduct(const std::vector<SymInt> &sizes);
/// Row-major strides for `sizes`, symbolic where the sizes are.
std::vector<SymInt> symContiguousStrides(const std::vector<SymInt> &sizes);
/// meta.strides = symContiguousStrides(meta.sizes), written in place when the
/// sizes are static: no new vector per call (a pass may call it per node).
void setContiguousStrides(TensorMeta &meta);
/// Same value: equal ints or identical expressions (hints ignored).
bool symEqual(const SymInt &a, const SymInt &b);

} // namespace exir::edge
