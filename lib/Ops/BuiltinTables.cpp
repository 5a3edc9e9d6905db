//===- Ops/BuiltinTables.cpp - The tables compiled into the tools ---------===//
//
// The built-in operator table and edge.yaml dtype rules. They live apart from
// the parsers so that exir-tablegen, which runs those parsers at build time to
// produce the compiled data, links without the data it is producing.
//
//===----------------------------------------------------------------------===//
#include "Ops/CompiledTables.h"
#include "Ops/EdgeYaml.h"
#include "Ops/OperatorTable.h"

namespace exir {

static OperatorTable &mutableBuiltin() {
  static OperatorTable table = OperatorTable::fromCompiled(compiled::builtinOperatorTableData());
  return table;
}

const OperatorTable &OperatorTable::builtin() { return mutableBuiltin(); }

void OperatorTable::extendBuiltin(std::vector<OperatorInfo> ops,
                                  const std::vector<std::pair<size_t, std::string>> &outOf,
                                  const std::string &sourceName) {
  OperatorTable &table = mutableBuiltin();
  size_t first = table.entries_.size();
  for (auto &info : ops) table.add(std::move(info), sourceName);
  std::vector<std::pair<size_t, std::string>> explicitOut;
  for (const auto &[index, overload] : outOf) explicitOut.emplace_back(first + index, overload);
  table.link(sourceName, explicitOut, {});
}

const EdgeDtypeRules &EdgeDtypeRules::builtin() {
  static const EdgeDtypeRules rules =
      EdgeDtypeRules::fromCompiled(compiled::builtinEdgeDtypeRulesData(), "edge_ops/edge.yaml");
  return rules;
}

} // namespace exir
