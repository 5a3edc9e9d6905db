//===- Ops/Schema.h - PyTorch operator signatures ---------------*- C++ -*-===//
//
// A parser and data model for the signature grammar PyTorch uses for its
// operators, e.g.
//   add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
// Every component that needs to know an operator's arguments (default
// filling, out-variant conversion, KernelCall layout, dtype checks) works from
// this one representation, so the grammar is handled in exactly one place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exir {

/// The element type of a schema type, before list / optional modifiers.
enum class SchemaBaseType : uint8_t {
  Tensor, Int, SymInt, Float, SymFloat, Bool, SymBool, Scalar, ScalarType, Layout, Device,
  MemoryFormat, Str, Generator, Dimname, Storage, Stream, QScheme, Complex, Any,
};

/// Spelling of a base type as it appears in schemas ("Tensor", "int", "SymInt", ...).
const char *schemaBaseTypeName(SchemaBaseType t);

/// A parsed type such as `Tensor`, `int[2]`, `SymInt[]?`, `Tensor?[]` or `ScalarType?`.
struct SchemaType {
  SchemaBaseType base = SchemaBaseType::Tensor;
  bool isList = false;
  std::optional<int64_t> fixedSize; // `int[2]` -> 2
  bool optional = false;            // the whole value may be None (`int[]?`, `Tensor?`)
  bool elementOptional = false;     // list elements may be None (`Tensor?[]`)

  bool isTensor() const { return base == SchemaBaseType::Tensor && !isList; }
  /// `Tensor[]` (elements not optional).
  bool isTensorList() const { return base == SchemaBaseType::Tensor && isList && !elementOptional; }
  /// Tensor-like in the sense of the edge dtype check: `Tensor`, `Tensor?`, `Tensor[]`
  /// (and `Tensor[]?`), but not `Tensor?[]`.
  bool isTensorLike() const {
    return base == SchemaBaseType::Tensor && !elementOptional;
  }
  /// Canonical spelling, e.g. "SymInt[2]", "Tensor?[]", "int[]?".
  std::string str() const;
  bool operator==(const SchemaType &o) const = default;
};

/// An alias annotation: `(a)`, `(a!)`, `(a -> *)`, `(a|b)`.
struct SchemaAlias {
  std::vector<std::string> beforeSet; // {"a"}
  std::vector<std::string> afterSet;  // {"*"} for `(a -> *)`, empty otherwise
  bool isWrite = false;
  bool empty() const { return beforeSet.empty(); }
  std::string str() const; // "(a!)" or "" when empty
  bool operator==(const SchemaAlias &o) const = default;
};

/// A default value, parsed. Identifiers (`contiguous_format`, `long`, `Mean`, ...)
/// are kept as text and resolved against the argument type by defaultToArgument().
struct SchemaDefault {
  enum class Kind : uint8_t { None, Int, Float, Bool, String, IntList, FloatList, BoolList, Identifier };
  Kind kind = Kind::None;
  int64_t intValue = 0;       // Int, Bool (0/1)
  double floatValue = 0;      // Float
  std::string text;           // String contents, Identifier name, and always the source text
  std::vector<int64_t> ints;  // IntList, BoolList (0/1)
  std::vector<double> floats; // FloatList
  bool operator==(const SchemaDefault &o) const = default;
};

/// One argument (or return) of a schema.
struct SchemaArgument {
  std::string name; // may be empty for returns
  SchemaType type;
  SchemaAlias alias;
  std::optional<SchemaDefault> defaultValue;
  bool kwargOnly = false;
  /// An out argument: written (alias with `!`) and keyword-only.
  bool isOut = false;

  bool isWrite() const { return alias.isWrite; }
  /// "Tensor(a!) out=None" style canonical text.
  std::string str() const;
};

/// A whole operator schema.
struct OpSchema {
  std::string ns = "aten"; // namespace without "::"
  std::string name;        // "add"
  std::string overload;    // "Tensor", "out", or "" for the default overload
  std::vector<SchemaArgument> arguments;
  std::vector<SchemaArgument> returns;
  std::string text;        // the source text as parsed

  /// "aten::add.Tensor"; the overload is left out when it is empty or "default".
  std::string qualifiedName() const;
  /// "add.Tensor" / "add" (no namespace).
  std::string nameWithOverload() const;
  /// Canonical re-printing of the schema (namespace included).
  std::string str() const;

  /// Index of the argument named `argName`, or -1.
  int argumentIndex(std::string_view argName) const;
  const SchemaArgument *argument(std::string_view argName) const;
  /// True if any argument is an out argument (alias-write and keyword-only).
  bool isOutVariant() const;
  /// The out arguments in schema order.
  std::vector<const SchemaArgument *> outArguments() const;
  /// In-place op in torchgen's sense: the name ends with a single '_'
  /// (`add_.Tensor`, `copy_`); dunder names like `__and__` are not.
  bool isInplace() const;
  /// Any argument is written (in-place or out).
  bool isMutable() const;
  /// View op in torch's sense: the first argument carries a non-write alias annotation.
  bool isView() const;
  /// Number of tensor-valued returns (Tensor / Tensor[] / Tensor?).
  size_t numTensorReturns() const;
};

/// Parses one schema. A missing namespace defaults to `defaultNamespace`.
/// Throws exir::Error with location "column N" (1-based) on bad syntax.
OpSchema parseSchema(std::string_view text, std::string_view defaultNamespace = "aten");

/// Parses a type on its own, e.g. "SymInt[]?" (used by tests and tools).
SchemaType parseSchemaType(std::string_view text);

/// Converts an argument's default value into an IR argument, as torch.export
/// would serialize the value if the caller had passed it explicitly.
/// Throws exir::Error when the argument has no default or the default does
/// not fit the type.
Argument defaultToArgument(const SchemaArgument &arg);

} // namespace exir
