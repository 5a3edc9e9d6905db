//===- Plan/RemoveGraphAsserts.cpp - drop runtime asserts and dead sym ops ===//
//
// to_executorch removes the runtime asserts torch.export records on symbolic
// values (_assert_scalar, sym_constrain_range*: RemoveGraphAssertsPass) and then
// dead-code-eliminates the graph; the sym ops that only fed the asserts
// (sym_size.int -> _operator.ge -> _assert_scalar) go with them. Only
// sym-valued nodes are eliminated here: tensor ops are never dead in programs
// torch.export gives us, and keeping them keeps node order stable.
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanPasses.h"

#include <unordered_set>

namespace exir::plan {

namespace {

bool isSymValued(const Node &node) {
  OpTarget t = parseTarget(node.target);
  if (t.dialect != TargetDialect::SymOp && !isSymSizeOp(t)) return false;
  for (const auto &o : node.outputs)
    if (o.kind != ArgKind::SymInt && o.kind != ArgKind::SymBool && o.kind != ArgKind::SymFloat) return false;
  return true;
}

void cleanGraph(Graph &g) {
  std::vector<Node> kept;
  for (Node &node : g.nodes)
    if (!isGraphAssert(parseTarget(node.target))) kept.push_back(std::move(node));
  g.nodes = std::move(kept);
  for (bool changed = true; changed;) {
    changed = false;
    std::unordered_set<std::string> used;
    for (const Node &node : g.nodes)
      for (const auto &in : node.inputs) {
        std::vector<std::string> names;
        in.arg.collectValueNames(names);
        used.insert(names.begin(), names.end());
      }
    for (const auto &o : g.outputs) {
      std::vector<std::string> names;
      o.collectValueNames(names);
      used.insert(names.begin(), names.end());
    }
    std::vector<Node> live;
    for (Node &node : g.nodes) {
      bool dead = isSymValued(node);
      for (const auto &o : node.outputs)
        for (const auto &s : o.syms)
          if (s.isName && used.count(s.name)) dead = false;
      if (!dead) {
        live.push_back(std::move(node));
        continue;
      }
      changed = true;
      for (const auto &o : node.outputs)
        for (const auto &s : o.syms) {
          g.symIntValues.erase(s.name);
          g.symBoolValues.erase(s.name);
          g.symFloatValues.erase(s.name);
        }
    }
    g.nodes = std::move(live);
  }
}

} // namespace

void removeGraphAsserts(Program &program) {
  for (auto &[methodName, method] : program.methods) {
    cleanGraph(method.program.graph);
    forEachSubgraph(method.program.graph, [](Graph &g, const std::string &) { cleanGraph(g); });
  }
}

} // namespace exir::plan
