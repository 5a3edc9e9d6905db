//===- Run/Value.h - Runtime values for exir-run ---------------*- C++ -*-===//
//
// What the reference interpreter passes to kernels: the runtime's EValue, in
// C++ we own. A Tensor views bytes it may not own (an arena slot planned by
// exir-plan, a constant) or owns them (an unplanned edge-stage value); either
// way `resize` behaves as the runtime's resize_tensor: a planned tensor may
// shrink or grow up to the bytes it was planned with, never past them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace exir::run {

struct Tensor {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes;
  /// The runtime's dim order (a permutation of 0..rank-1; [0..rank-1] = contiguous).
  std::vector<uint8_t> dimOrder;
  /// The bytes: points into an arena, a constant, or `owned`.
  uint8_t *data = nullptr;
  /// Bytes available at `data` (the planned bound for arena tensors).
  size_t capacity = 0;
  /// Set when the tensor owns its bytes (unplanned values); resize may reallocate.
  std::shared_ptr<std::vector<uint8_t>> owned;
  /// False for arena and constant tensors: resize past `capacity` is an error.
  bool growable = false;

  int64_t dim() const { return int64_t(sizes.size()); }
  int64_t numel() const;
  size_t nbytes() const { return size_t(numel()) * elementSize(dtype); }
  /// Contiguous strides (in elements) that follow `dimOrder`.
  std::vector<int64_t> strides() const;
  bool isContiguous() const; // dimOrder is 0..rank-1
  /// Sets new sizes (dim order becomes contiguous if the rank changes). Throws
  /// exir::Error when a non-growable tensor would need more than `capacity`.
  void resize(const std::vector<int64_t> &newSizes);

  template <typename T> T *ptr() { return reinterpret_cast<T *>(data); }
  template <typename T> const T *ptr() const { return reinterpret_cast<const T *>(data); }

  /// A fresh, owned, zero-filled, contiguous tensor.
  static Tensor make(ScalarType dtype, std::vector<int64_t> sizes);
};

/// The runtime's EValue tags, plus what the interpreter needs for graphs.
struct Value {
  using TensorList = std::vector<Tensor *>;
  using OptionalTensorList = std::vector<Tensor *>; // nullptr = None
  std::variant<std::monostate,          // None
               int64_t,                 // Int (also SymInt, ScalarType, MemoryFormat, Layout as ints)
               double,                  // Double
               bool,                    // Bool
               std::string,             // String
               std::shared_ptr<Tensor>, // Tensor
               std::vector<int64_t>,    // IntList
               std::vector<double>,     // DoubleList
               std::vector<bool>,       // BoolList
               TensorList,              // TensorList (pointers to other values' tensors)
               std::pair<OptionalTensorList, int> // OptionalTensorList (the int is unused; keeps the type distinct)
               >
      v;

  bool isNone() const { return v.index() == 0; }
  bool isInt() const { return std::holds_alternative<int64_t>(v); }
  bool isDouble() const { return std::holds_alternative<double>(v); }
  bool isBool() const { return std::holds_alternative<bool>(v); }
  bool isTensor() const { return std::holds_alternative<std::shared_ptr<Tensor>>(v); }
  bool isIntList() const { return std::holds_alternative<std::vector<int64_t>>(v); }
  bool isTensorList() const { return std::holds_alternative<TensorList>(v); }
  bool isOptionalTensorList() const { return std::holds_alternative<std::pair<OptionalTensorList, int>>(v); }

  /// Accessors throw exir::Error("expected <kind> argument, got <kind>") on a mismatch.
  int64_t toInt() const;
  double toDouble() const; // Int or Double (a Scalar argument)
  bool toBool() const;
  /// Scalar arguments may be Int, Double or Bool.
  bool isScalar() const { return isInt() || isDouble() || isBool(); }
  Tensor &toTensor() const;
  const std::vector<int64_t> &toIntList() const;
  const std::vector<double> &toDoubleList() const;
  const std::vector<bool> &toBoolList() const;
  const TensorList &toTensorList() const;
  const OptionalTensorList &toOptionalTensorList() const;
  /// An Optional[Tensor] argument: nullptr when None.
  Tensor *toOptionalTensor() const;
  const char *kindName() const;

  static Value none() { return {}; }
  static Value of(int64_t i) { Value x; x.v = i; return x; }
  static Value of(double d) { Value x; x.v = d; return x; }
  static Value of(bool b) { Value x; x.v = b; return x; }
  static Value of(Tensor t) { Value x; x.v = std::make_shared<Tensor>(std::move(t)); return x; }
};

} // namespace exir::run
