//===- Ops/OperatorTable.h - Every operator the tools know ------*- C++ -*-===//
//
// The one table of operator schemas used by every stage: default filling,
// core-ATen checks, view -> _copy replacement, out-variant conversion and the
// KernelCall argument layout. The builtin table is compiled in from
// lib/Ops/operators.txt; see that file for the line format.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Ops/Schema.h"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace exir {

/// One table entry: the schema and what the table knows about it.
struct OperatorInfo {
  OpSchema schema;
  bool isCore = false;       // in the core ATen op set
  bool isViewCopy = false;   // the functional `_copy` variant of some view op
  const OpSchema *outVariant = nullptr; // for functional ops that have one
  const OpSchema *viewCopy = nullptr;   // for view ops that have a `_copy` op
  const OpSchema *functional = nullptr; // for out variants: the functional op they serve
  int line = 0;              // line in the table source
};

class OperatorTable {
public:
  OperatorTable() = default;
  OperatorTable(OperatorTable &&) = default;
  OperatorTable &operator=(OperatorTable &&) = default;
  OperatorTable(const OperatorTable &) = delete;
  OperatorTable &operator=(const OperatorTable &) = delete;

  /// The table compiled into the tools (lib/Ops/operators.txt).
  static const OperatorTable &builtin();

  /// Adds operators to the builtin table (an op library, Ops/OpLibrary.h):
  /// `ops[i]` was read from line `ops[i].line` of `sourceName`; `outOf` pairs
  /// an entry's index in `ops` with the overload of its explicit out variant.
  /// Out variants are otherwise linked by signature, as in the builtin table.
  /// Throws (naming the line) for an operator the table already holds.
  static void extendBuiltin(std::vector<OperatorInfo> ops, const std::vector<std::pair<size_t, std::string>> &outOf,
                            const std::string &sourceName);

  /// Parses a table in the operators.txt format. Errors name `sourceName`
  /// and "line N" (and the column inside a schema).
  static OperatorTable parse(std::string_view text, const std::string &sourceName);

  /// The table in the compact form exir-tablegen compiles into the tools
  /// (Ops/CompiledTables.h), and back: fromCompiled(toCompiled()) equals this
  /// table entry by entry, links included. Bad data throws InternalError.
  std::string toCompiled() const;
  static OperatorTable fromCompiled(std::string_view data);

  /// Looks an op up by qualified name: "aten::add.Tensor", "aten::relu",
  /// "aten::relu.default"; a missing namespace means "aten". Null if unknown.
  const OpSchema *lookup(std::string_view qualifiedName) const;
  const OperatorInfo *info(std::string_view qualifiedName) const;
  const OperatorInfo *info(const OpSchema &schema) const;

  bool isCore(const OpSchema &schema) const;
  /// The out variant of a functional op (add.Tensor -> add.out, max.dim ->
  /// max.dim_max); the schema itself if it already is an out variant; null
  /// for in-place ops and ops without one.
  const OpSchema *outVariant(const OpSchema &schema) const;
  /// The functional `_copy` op replacing a view op (view -> view_copy,
  /// select.int -> select_copy.int); null if `schema` is not a view op or
  /// has no `_copy` variant.
  const OpSchema *viewCopyOf(const OpSchema &schema) const;
  /// For an out variant, the functional op it is the out form of.
  const OpSchema *functionalOf(const OpSchema &schema) const;

  /// Every schema, in table order.
  std::vector<const OpSchema *> all() const;
  size_t size() const { return entries_.size(); }

  /// Normalizes a qualified name: adds "aten::" when no namespace is given and
  /// drops a ".default" overload.
  static std::string normalizeName(std::string_view qualifiedName);

private:
  void add(OperatorInfo info, const std::string &sourceName);
  void link(const std::string &sourceName,
            const std::vector<std::pair<size_t, std::string>> &explicitOut,
            const std::vector<std::pair<size_t, std::string>> &explicitCopy);
  const OpSchema *findOutVariant(const OpSchema &schema) const;

  std::vector<std::unique_ptr<OperatorInfo>> entries_;
  std::unordered_map<std::string, size_t> byName_;
};

} // namespace exir
