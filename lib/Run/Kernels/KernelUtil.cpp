//===- Run/Kernels/KernelUtil.cpp - Helpers shared by the kernels ---------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {

std::string sizesText(const std::vector<int64_t> &sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string dtypeText(ScalarType t) { return torchName(t); }

int64_t wrapDim(int64_t dim, int64_t rank) {
  int64_t bound = std::max<int64_t>(rank, 1);
  if (dim < -bound || dim >= bound)
    fail("dimension " + std::to_string(dim) + " out of range for a tensor of rank " + std::to_string(rank));
  return dim < 0 ? dim + bound : dim;
}

Scalar Scalar::of(const Value &value) {
  Scalar s;
  if (value.isBool()) {
    s.kind = Kind::Bool;
    s.b = value.toBool();
  } else if (value.isInt()) {
    s.kind = Kind::Int;
    s.i = value.toInt();
  } else if (value.isDouble()) {
    s.kind = Kind::Double;
    s.d = value.toDouble();
  } else {
    fail(std::string("expected Scalar argument, got ") + value.kindName());
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Type promotion
//===----------------------------------------------------------------------===//

namespace {
int integerRank(ScalarType t) {
  switch (t) {
  case ScalarType::Char: case ScalarType::Byte: return 1;
  case ScalarType::Short: return 2;
  case ScalarType::Int: return 3;
  case ScalarType::Long: return 4;
  default: return 0;
  }
}
int floatRank(ScalarType t) {
  switch (t) {
  case ScalarType::Half: case ScalarType::BFloat16: return 1;
  case ScalarType::Float: return 2;
  case ScalarType::Double: return 3;
  default: return 0;
  }
}
} // namespace

ScalarType promoteTypes(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;
  bool fa = isFloatingType(a), fb = isFloatingType(b);
  if (fa && fb) {
    // Half with BFloat16 has no common 16-bit type.
    if (floatRank(a) == 1 && floatRank(b) == 1) return ScalarType::Float;
    return floatRank(a) >= floatRank(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  // Both integral: uint8 with int8 needs int16; uint8 with wider signed is the wider one.
  if ((a == ScalarType::Byte && b == ScalarType::Char) || (a == ScalarType::Char && b == ScalarType::Byte))
    return ScalarType::Short;
  if (integerRank(a) == 0 || integerRank(b) == 0)
    fail("no type promotion for " + dtypeText(a) + " and " + dtypeText(b));
  return integerRank(a) >= integerRank(b) ? a : b;
}

bool canCast(ScalarType from, ScalarType to) {
  if (isFloatingType(from) && isIntegralType(to, /*includeBool=*/true)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

void checkCanCast(ScalarType from, ScalarType to, const char *what) {
  if (!canCast(from, to))
    fail("result type " + dtypeText(from) + " can't be cast to the " + what + " dtype " + dtypeText(to));
}

ResultType &ResultType::add(const Tensor &t) {
  ScalarType &slot = t.dim() == 0 ? zeroResult_ : dimResult_;
  slot = promoteTypes(slot, t.dtype);
  return *this;
}

ResultType &ResultType::add(const Scalar &s) {
  wrappedResult_ = promoteTypes(wrappedResult_, s.wrappedType());
  return *this;
}

namespace {
// c10's combine_categories: a lower-priority operand only matters when it is
// of a higher category (bool < integral < floating).
ScalarType combineCategories(ScalarType higher, ScalarType lower) {
  if (isFloatingType(higher)) return higher;
  if (higher == ScalarType::Bool || isFloatingType(lower)) return promoteTypes(higher, lower);
  if (higher != ScalarType::Undefined) return higher;
  return lower;
}
} // namespace

ScalarType ResultType::get() const {
  return combineCategories(dimResult_, combineCategories(zeroResult_, wrappedResult_));
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

namespace {
bool isChannelsLast(const Tensor &t) {
  if (t.dimOrder.size() == 4) return t.dimOrder == std::vector<uint8_t>{0, 2, 3, 1};
  if (t.dimOrder.size() == 5) return t.dimOrder == std::vector<uint8_t>{0, 2, 3, 4, 1};
  return false;
}
} // namespace

void checkSameDimOrder(std::initializer_list<const Tensor *> tensors) {
  bool allContiguous = true, allChannelsLast = true;
  for (const Tensor *t : tensors) {
    if (!t || t->dim() < 2) continue;
    allContiguous &= t->isContiguous();
    allChannelsLast &= isChannelsLast(*t);
  }
  if (!allContiguous && !allChannelsLast) fail("input and output dim orders differ");
}

void checkContiguous(std::initializer_list<const Tensor *> tensors) {
  for (const Tensor *t : tensors)
    if (t && !t->isContiguous())
      fail("only the contiguous dim order is supported by this kernel");
}

void checkDtype(const Tensor &t, ScalarType expected, const char *what) {
  if (t.dtype != expected)
    fail(std::string(what) + " must be " + dtypeText(expected) + ", got " + dtypeText(t.dtype));
}

void checkSameDtype(const Tensor &a, const Tensor &b, const char *whatA, const char *whatB) {
  if (a.dtype != b.dtype)
    fail(std::string(whatA) + " (" + dtypeText(a.dtype) + ") and " + whatB + " (" + dtypeText(b.dtype) +
         ") must have the same dtype");
}

void checkFloating(const Tensor &t, const char *what) {
  if (!isFloatingType(t.dtype))
    fail(std::string(what) + " must have a floating dtype, got " + dtypeText(t.dtype));
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

std::vector<int64_t> broadcastShape(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      fail("shapes " + sizesText(a) + " and " + sizesText(b) + " are not broadcastable");
    shape[i] = da == 1 ? db : da;
  }
  return shape;
}

Operand operandFor(const Tensor &t, const std::vector<int64_t> &shape) {
  Operand op;
  op.data = t.data;
  op.byteStrides.assign(shape.size(), 0);
  std::vector<int64_t> strides = t.strides();
  size_t offset = shape.size() - t.sizes.size();
  if (t.sizes.size() > shape.size()) fail("tensor of rank " + std::to_string(t.dim()) + " broadcast to lower rank");
  for (size_t i = 0; i < t.sizes.size(); ++i) {
    if (t.sizes[i] == shape[offset + i])
      op.byteStrides[offset + i] = strides[i] * int64_t(elementSize(t.dtype));
    else if (t.sizes[i] != 1)
      fail("shape " + sizesText(t.sizes) + " does not broadcast to " + sizesText(shape));
  }
  return op;
}

Tensor scalarTensor(const Scalar &s, ScalarType t) {
  Tensor result = Tensor::make(t, {});
  switchDtype(t, [&]<typename T>() { *result.ptr<T>() = s.as<T>(); });
  return result;
}

void copyInto(Tensor &dst, const Tensor &src) { copyView(View::of(dst), View::of(src)); }

std::vector<int64_t> inferSizes(std::vector<int64_t> sizes, int64_t numel) {
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (inferred >= 0) fail("only one dimension can be inferred");
      inferred = int64_t(i);
    } else {
      known *= sizes[i];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0) fail("shape " + sizesText(sizes) + " is invalid for " + std::to_string(numel) + " elements");
    sizes[inferred] = numel / known;
  } else if (known != numel) {
    fail("shape " + sizesText(sizes) + " is invalid for " + std::to_string(numel) + " elements");
  }
  return sizes;
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

std::vector<int64_t> intListArg(std::span<Value *> args, size_t i, bool *present) {
  if (present) *present = !args[i]->isNone();
  if (args[i]->isNone()) return {};
  if (args[i]->isInt()) return {args[i]->toInt()}; // an int[1] given as one int
  return args[i]->toIntList();
}

Value::OptionalTensorList optionalTensorListArg(std::span<Value *> args, size_t i) {
  if (args[i]->isTensorList()) return args[i]->toTensorList();
  return args[i]->toOptionalTensorList();
}

std::optional<std::string> optStringArg(std::span<Value *> args, size_t i) {
  if (args[i]->isNone()) return std::nullopt;
  if (auto *s = std::get_if<std::string>(&args[i]->v)) return *s;
  fail(std::string("expected String argument, got ") + args[i]->kindName());
}

//===----------------------------------------------------------------------===//
// Strided views and reductions
//===----------------------------------------------------------------------===//

View View::of(const Tensor &t) {
  View v;
  v.data = t.data;
  v.sizes = t.sizes;
  v.dtype = t.dtype;
  v.byteStrides = t.strides();
  for (int64_t &s : v.byteStrides) s *= int64_t(elementSize(t.dtype));
  return v;
}

View View::permuted(const std::vector<int64_t> &perm) const {
  View v = *this;
  for (size_t i = 0; i < perm.size(); ++i) {
    v.sizes[i] = sizes[perm[i]];
    v.byteStrides[i] = byteStrides[perm[i]];
  }
  return v;
}

View View::sliced(int64_t dim, int64_t start, int64_t length, int64_t step) const {
  View v = *this;
  v.data += start * byteStrides[dim];
  v.sizes[dim] = length;
  v.byteStrides[dim] *= step;
  return v;
}

View View::selected(int64_t dim, int64_t index) const {
  View v = *this;
  v.data += index * byteStrides[dim];
  v.sizes.erase(v.sizes.begin() + dim);
  v.byteStrides.erase(v.byteStrides.begin() + dim);
  return v;
}

View View::unsqueezed(int64_t dim) const {
  View v = *this;
  v.sizes.insert(v.sizes.begin() + dim, 1);
  v.byteStrides.insert(v.byteStrides.begin() + dim, 0);
  return v;
}

void copyView(const View &dst, const View &src) {
  if (dst.sizes != src.sizes) fail("copy from " + sizesText(src.sizes) + " to " + sizesText(dst.sizes));
  std::array<Operand, 2> ops{Operand{dst.data, dst.byteStrides}, Operand{src.data, src.byteStrides}};
  if (dst.dtype == src.dtype) {
    size_t n = elementSize(dst.dtype);
    forEachElement(dst.sizes, ops, [n](const std::array<uint8_t *, 2> &p) { std::memcpy(p[0], p[1], n); });
    return;
  }
  switchDtype(src.dtype, [&]<typename S>() {
    switchDtype(dst.dtype, [&]<typename D>() {
      forEachElement(dst.sizes, ops, [](const std::array<uint8_t *, 2> &p) {
        *reinterpret_cast<D *>(p[0]) = static_cast<D>(*reinterpret_cast<const S *>(p[1]));
      });
    });
  });
}

Reduction planReduction(const Tensor &self, const std::vector<int64_t> &dims, bool keepdim) {
  Reduction r;
  std::vector<bool> reduced(self.dim(), dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrapDim(d, self.dim());
    if (self.dim() == 0) continue;
    if (reduced[w] && !dims.empty()) {
      bool repeated = std::count_if(dims.begin(), dims.end(), [&](int64_t x) { return wrapDim(x, self.dim()) == w; }) > 1;
      if (repeated) fail("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    }
    reduced[w] = true;
  }
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!reduced[d]) {
      r.perm.push_back(d);
      r.rows *= self.sizes[d];
    }
  for (int64_t d = 0; d < self.dim(); ++d)
    if (reduced[d]) {
      r.perm.push_back(d);
      r.rowLength *= self.sizes[d];
    }
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!reduced[d]) r.outSizes.push_back(self.sizes[d]);
    else if (keepdim) r.outSizes.push_back(1);
  }
  return r;
}

} // namespace exir::run::kern
