//===- Ops/EdgeYaml.h - edge.yaml dtype constraints --------------*- C++ -*-===//
//
// Reads ExecuTorch's edge.yaml DSL (func / namespace / inherits / type_alias /
// type_constraint) into per-op dtype constraints and implements the edge
// dialect dtype check of EdgeOpArgValidator (pte-format.md §6.2): the dtypes
// of an op's tensor inputs and outputs must match some allowed row, with every
// alias of a row unified to a single dtype.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"
#include "Ops/OperatorTable.h"
#include "Ops/Schema.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace exir {

/// One `type_alias` entry: T0 -> [Bool, Byte, ...].
struct EdgeTypeAlias {
  std::string name;
  std::vector<ScalarType> dtypes;
  bool allows(ScalarType t) const;
};

/// One row of `type_constraint`: argument / return name -> alias index.
struct EdgeConstraintRow {
  std::vector<std::pair<std::string, size_t>> entries;
  int line = 0;
  /// Alias index for `name`, or nullopt if the row does not mention it.
  std::optional<size_t> aliasOf(std::string_view name) const;
};

/// The constraint of one op (one `- func:` entry).
struct EdgeOpConstraint {
  std::string func;       // "aten::add.Tensor"
  std::string inherits;   // key: the op the entry constrains
  int line = 0;           // line of the entry in its file
  const OpSchema *schema = nullptr; // the table's schema of `inherits`
  std::vector<EdgeTypeAlias> aliases;
  std::vector<EdgeConstraintRow> rows;
};

/// The dtype rules of a whole edge.yaml file.
class EdgeDtypeRules {
public:
  /// Reads an edge.yaml file. Errors (exir::Error) name the file and "line N":
  /// YAML syntax errors, entries whose `inherits` op is not in `table`,
  /// undeclared aliases, unknown dtype names, and rows that leave out a tensor
  /// argument or return of the op.
  static EdgeDtypeRules loadFile(const std::string &path,
                                 const OperatorTable &table = OperatorTable::builtin());
  /// Same, from text already in memory; `sourceName` is used in errors.
  static EdgeDtypeRules parse(std::string_view text, const std::string &sourceName,
                              const OperatorTable &table = OperatorTable::builtin());
  /// The dtype rules of an op library (edge_ops/OP_LIBRARY.md): entries whose
  /// `func` is a whole schema and that may also carry `out` and `core`; an
  /// entry without `type_alias` / `type_constraint` has no dtype rule.
  static EdgeDtypeRules parseOpLibrary(std::string_view text, const std::string &sourceName,
                                       const OperatorTable &table = OperatorTable::builtin());
  /// The project's own edge_ops/edge.yaml, compiled in: parsed at build time
  /// by exir-tablegen and rebuilt from its compact form (Ops/CompiledTables.h).
  static const EdgeDtypeRules &builtin();

  /// The rules in the compact form exir-tablegen compiles into the tools, and
  /// back: fromCompiled(toCompiled()) equals these rules entry by entry when
  /// `table` is the one they were parsed with. Bad data throws InternalError.
  std::string toCompiled() const;
  static EdgeDtypeRules fromCompiled(std::string_view data, const std::string &sourceName,
                                     const OperatorTable &table = OperatorTable::builtin());

  /// These rules with `user`'s entries taking the place of the ones for the
  /// same ops; the ops `user` does not list keep these rules (how a user's
  /// --edge-yaml applies on top of the built-in file).
  EdgeDtypeRules overlaidWith(const EdgeDtypeRules &user) const;

  /// The constraint keyed by `inherits` ("aten::add.Tensor", "aten::abs";
  /// ".default" and a missing namespace are normalized). Null if absent.
  const EdgeOpConstraint *find(std::string_view qualifiedName) const;
  std::vector<const EdgeOpConstraint *> all() const;
  size_t size() const { return ops_.size(); }
  const std::string &sourceName() const { return sourceName_; }

  /// The dtype check. `dtypesByName` maps the names of the op's tensor inputs
  /// and outputs (argument names; return names, or `__ret_<k>` for unnamed
  /// tensor returns) to their dtypes. ScalarType::Undefined is a wildcard
  /// (an empty Tensor[] or a None output). Tensor? arguments that are None
  /// are simply left out; Tensor?[] arguments are ignored. Ops absent from
  /// the file accept every edge dtype. Returns nullopt when the combination
  /// is allowed, else a one-line explanation listing the dtypes found and the
  /// allowed rows.
  std::optional<std::string> check(const OpSchema &schema,
                                   const std::map<std::string, ScalarType> &dtypesByName) const;

  /// The dtypes of a node's tensor arguments and results, keyed as check()
  /// expects: argument names for Tensor / Tensor? / Tensor[] (first element)
  /// arguments that are given, return names or `__ret_<k>` for results.
  static std::map<std::string, ScalarType> nodeDtypes(const OpSchema &schema, const Graph &graph, const Node &node);

  /// The dtype-check key of return `index`: its name, or `__ret_<k>` where k
  /// counts tensor returns only. Empty for non-tensor returns.
  static std::string returnKey(const OpSchema &schema, size_t index);
  /// Every dtype-check key of an op in schema order: tensor-like arguments
  /// (Tensor, Tensor?, Tensor[]) then tensor returns.
  static std::vector<std::string> dtypeKeys(const OpSchema &schema);
  /// Readable form of a constraint's rows, restricted to the op's dtype keys:
  /// "{self: Bool|Byte, __ret_0: Float}, {self: Double|Float, __ret_0: same as self}".
  static std::string describeRows(const EdgeOpConstraint &constraint, size_t maxRows = 16);

private:
  static EdgeDtypeRules parse(std::string_view text, const std::string &sourceName, const OperatorTable &table,
                              bool opLibrary);
  std::vector<EdgeOpConstraint> ops_;
  std::unordered_map<std::string, size_t> byName_;
  std::string sourceName_;
};

} // namespace exir
