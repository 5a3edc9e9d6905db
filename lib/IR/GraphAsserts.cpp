//===- IR/GraphAsserts.cpp - drop runtime asserts and what only they use ---===//
//
// torch.export records shape and metadata checks as graph nodes. The runtime
// has no kernels for them and the guards already held at export, so they go,
// as upstream's RemoveGraphAssertsPass removes them; the symbolic ops that
// only fed them are then dead and go too. exir-edge runs this on raw exports,
// exir-plan on Edge programs that still carry asserts. Two linear sweeps:
// delete the asserts, then dead symbolic ops back to front.
//
//===----------------------------------------------------------------------===//
#include "IR/IR.h"

#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace exir {

namespace {
bool isSymOp(const OpTarget &t) {
  return t.dialect == TargetDialect::SymOp || isSymSizeOp(t) ||
         ((t.dialect == TargetDialect::Aten || t.dialect == TargetDialect::Edge) && t.ns == "aten" &&
          t.name.rfind("sym_", 0) == 0);
}
} // namespace

void removeGraphAssertsIn(Graph &g) {
  // Per distinct target (a graph has few): {is an assert, is a symbolic op}.
  std::unordered_map<std::string, std::pair<bool, bool>> kinds;
  auto kindOf = [&](const Node &n) -> const std::pair<bool, bool> & {
    auto [slot, unseen] = kinds.try_emplace(n.target);
    if (unseen) {
      OpTarget t = parseTarget(n.target);
      slot->second = {isGraphAssert(t), isSymOp(t)};
    }
    return slot->second;
  };
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  bool anySymOp = false;
  for (Node &n : g.nodes) {
    const auto &[isAssert, symOp] = kindOf(n);
    if (isAssert) continue;
    anySymOp |= symOp;
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
  if (!anySymOp) return; // nothing can be dead: skip counting every value's uses

  // Dead symbolic ops: count uses, then drop unused sym nodes from the back so a
  // chain (ge <- sym_size) disappears in one sweep.
  std::unordered_map<std::string, size_t> uses;
  std::vector<std::string> names;
  auto count = [&](const Argument &a, int delta) {
    names.clear();
    a.collectValueNames(names);
    for (const auto &n : names) uses[n] += size_t(delta);
  };
  for (const Node &n : g.nodes)
    for (const auto &in : n.inputs) count(in.arg, 1);
  for (const auto &o : g.outputs) count(o, 1);
  std::vector<bool> dead(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node &n = g.nodes[i];
    if (!kindOf(n).second || n.outputs.empty()) continue;
    bool used = false;
    for (const auto &o : n.outputs) {
      names.clear();
      o.collectValueNames(names);
      for (const auto &v : names) used = used || uses[v] != 0;
    }
    if (used) continue;
    dead[i] = true;
    for (const auto &in : n.inputs) count(in.arg, -1);
  }
  std::vector<Node> live;
  live.reserve(g.nodes.size());
  std::unordered_set<std::string> gone;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!dead[i]) {
      live.push_back(std::move(g.nodes[i]));
      continue;
    }
    for (const auto &o : g.nodes[i].outputs) {
      names.clear();
      o.collectValueNames(names);
      gone.insert(names.begin(), names.end());
    }
  }
  auto prune = [&](auto &values) {
    std::remove_reference_t<decltype(values)> remaining;
    for (auto &[name, v] : values)
      if (!gone.count(name)) remaining.set(name, v);
    values = std::move(remaining);
  };
  if (!gone.empty()) {
    prune(g.symIntValues);
    prune(g.symBoolValues);
    prune(g.symFloatValues);
  }
  g.nodes = std::move(live);
}

void removeProgramAsserts(Program &program) {
  for (auto &[name, method] : program.methods) {
    removeGraphAssertsIn(method.program.graph);
    forEachSubgraph(method.program.graph, [](Graph &g, const std::string &) { removeGraphAssertsIn(g); });
  }
}

} // namespace exir
