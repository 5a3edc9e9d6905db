//===- Edge/SymSize.cpp - Arithmetic on symbolic sizes --------------------===//
#include "Edge/SymSize.h"
#include "Support/Error.h"

namespace exir::edge {

namespace {
std::string srepr(const SymInt &s) {
  return s.isExpr ? s.expr() : "Integer(" + std::to_string(s.value) + ")";
}
SymInt expr(std::string text) { return SymInt::symbol(std::move(text)); }
} // namespace

SymInt symMul(const SymInt &a, const SymInt &b) {
  if (!a.isExpr && !b.isExpr) return SymInt::of(a.value * b.value);
  if (!a.isExpr && a.value == 1) return b;
  if (!b.isExpr && b.value == 1) return a;
  if ((!a.isExpr && a.value == 0) || (!b.isExpr && b.value == 0)) return SymInt::of(0);
  // sympy puts the number first: Mul(Integer(4), Symbol('s0', ...)).
  return !b.isExpr ? expr("Mul(" + srepr(b) + ", " + srepr(a) + ")") : expr("Mul(" + srepr(a) + ", " + srepr(b) + ")");
}

SymInt symAdd(const SymInt &a, const SymInt &b) {
  if (!a.isExpr && !b.isExpr) return SymInt::of(a.value + b.value);
  if (!a.isExpr && a.value == 0) return b;
  if (!b.isExpr && b.value == 0) return a;
  return !b.isExpr ? expr("Add(" + srepr(b) + ", " + srepr(a) + ")") : expr("Add(" + srepr(a) + ", " + srepr(b) + ")");
}

SymInt symFloorDiv(const SymInt &a, const SymInt &b) {
  if (!a.isExpr && !b.isExpr) {
    if (b.value == 0) throw Error("division of a size by 0");
    int64_t q = a.value / b.value;
    if ((a.value % b.value != 0) && ((a.value < 0) != (b.value < 0))) --q;
    return SymInt::of(q);
  }
  if (!b.isExpr && b.value == 1) return a;
  return expr("FloorDiv(" + srepr(a) + ", " + srepr(b) + ")");
}

SymInt symProduct(const std::vector<SymInt> &sizes) {
  SymInt p = SymInt::of(1);
  for (const auto &s : sizes) p = symMul(p, s);
  return p;
}

std::vector<SymInt> symContiguousStrides(const std::vector<SymInt> &sizes) {
  std::vector<SymInt> strides(sizes.size(), SymInt::of(1));
  SymInt running = SymInt::of(1);
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = running;
    // A size-0 or size-1 dim does not change the running stride in torch.
    const SymInt &s = sizes[i];
    if (s.isExpr || s.value > 1) running = symMul(running, s);
  }
  return strides;
}

void setContiguousStrides(TensorMeta &meta) {
  for (const auto &s : meta.sizes)
    if (s.isExpr) {
      meta.strides = symContiguousStrides(meta.sizes);
      return;
    }
  meta.strides.resize(meta.sizes.size());
  int64_t running = 1;
  for (size_t i = meta.sizes.size(); i-- > 0;) {
    meta.strides[i] = SymInt::of(running);
    if (meta.sizes[i].value > 1) running *= meta.sizes[i].value; // as symContiguousStrides
  }
}

bool symEqual(const SymInt &a, const SymInt &b) {
  return a.isExpr == b.isExpr && (a.isExpr ? a.expr() == b.expr() : a.value == b.value);
}

} // namespace exir::edge
