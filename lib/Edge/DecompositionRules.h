//===- Edge/DecompositionRules.h - Decompositions as data -------*- C++ -*-===//
//
// Most decompositions to core ATen replace one op by a few core ops whose
// arguments are the original's arguments, constants or simple arithmetic on
// them. Those live as rules in a YAML file (lib/Edge/decompositions.yaml,
// compiled in; users add their own with --decompositions FILE), instantiated
// by one small engine; the format is documented in lib/Edge/DECOMPOSITIONS.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace exir::edge {

class DecompositionRules {
public:
  DecompositionRules();
  ~DecompositionRules();
  DecompositionRules(DecompositionRules &&) noexcept;
  DecompositionRules &operator=(DecompositionRules &&) noexcept;

  /// The project's rules (lib/Edge/decompositions.yaml).
  static const DecompositionRules &builtin();
  /// Parses rules; errors name `sourceName` and the YAML line.
  static DecompositionRules parse(const std::string &text, const std::string &sourceName);
  static DecompositionRules loadFile(const std::string &path);
  /// The `match:` rules of a rewrite-rule file (--rewrite, REWRITE_RULES.md);
  /// its `replace:` entries are left to the rewrite pass.
  static DecompositionRules parseRewriteRules(const std::string &text, const std::string &sourceName);
  /// Rules of `other` are tried before ours (a user's file overrides the builtin one).
  void prepend(const DecompositionRules &other);

  /// Number of rules.
  size_t size() const;
  /// Qualified names of the ops the rules decompose ("aten::layer_norm").
  std::vector<std::string> matchedOps() const;
  /// One line per rule that decomposes `qualifiedName` (normalized as the
  /// operator table does): "FILE:LINE: when COND -> aten::a, aten::b".
  std::vector<std::string> describe(const std::string &qualifiedName) const;

  /// Parses every rule not parsed yet (the builtin file is parsed a rule at a
  /// time, when a graph first holds its op) and returns their number: a
  /// rule's errors show here at the latest.
  size_t parseAll() const;

  /// Decomposes every node a rule matches, repeatedly until only ops without a
  /// matching rule are left; ops named in `keep` (qualified names, as
  /// --allow-non-core gives them) are left alone. Returns the number of rewrites.
  size_t run(Graph &graph, const std::vector<std::string> &keep = {}) const;

  struct Rule;
  struct Slot;

private:
  static DecompositionRules parse(const std::string &text, const std::string &sourceName, bool rewriteRules);
  static DecompositionRules parseLazily(const std::string &text, const std::string &sourceName);
  std::vector<std::shared_ptr<const Slot>> rules_;
};

/// Rewrites `program` with `rules` (every method, nested subgraphs included).
void decomposeWithRules(Program &program, const DecompositionRules &rules, const std::vector<std::string> &keep = {});

} // namespace exir::edge
