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
#include "IR/ValueNames.h"

#include <algorithm>
#include <string_view>

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

// parseTarget builds several strings; these say from the text alone that a
// target cannot be an assert (every one has "assert" or "constrain" in its
// name) or a sym op ("sym" in its name, or a Python operator/math function).
bool mayBeAssert(const std::string &target) {
  return target.find("assert") != std::string::npos || target.find("constrain") != std::string::npos;
}
bool mayBeSymOp(const std::string &target) {
  return target.find("sym") != std::string::npos || target.rfind("_operator.", 0) == 0 ||
         target.rfind("operator.", 0) == 0 || target.rfind("math.", 0) == 0;
}
} // namespace

bool mayHoldGraphAssertWork(const std::string &target) { return mayBeAssert(target) || mayBeSymOp(target); }

void removeGraphAssertsIn(Graph &g) {
  std::vector<bool> isAssert(g.nodes.size(), false);
  bool anyAssert = false;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (mayBeAssert(g.nodes[i].target) && isGraphAssert(parseTarget(g.nodes[i].target)))
      anyAssert = isAssert[i] = true;
  if (anyAssert) {
    std::vector<Node> kept;
    kept.reserve(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!isAssert[i]) kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
  }

  // Dead symbolic ops: count uses, then drop unused sym nodes from the back so a
  // chain (ge <- sym_size) disappears in one sweep. Nothing to do without sym ops.
  std::vector<bool> symOp(g.nodes.size(), false);
  bool anySymOp = false;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!g.nodes[i].outputs.empty() && mayBeSymOp(g.nodes[i].target) && isSymOp(parseTarget(g.nodes[i].target)))
      anySymOp = symOp[i] = true;
  if (!anySymOp) return;
  // Views of the graph's names, which stay in place until the nodes are moved below.
  std::unordered_map<std::string_view, size_t> uses;
  auto count = [&](const Argument &a, int delta) {
    forEachValueName(a, [&](const std::string &n) { uses[n] += size_t(delta); });
  };
  for (const Node &n : g.nodes)
    for (const auto &in : n.inputs) count(in.arg, 1);
  for (const auto &o : g.outputs) count(o, 1);
  std::vector<bool> dead(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node &n = g.nodes[i];
    if (!symOp[i]) continue;
    bool used = false;
    for (const auto &o : n.outputs)
      forEachValueName(o, [&](const std::string &v) {
        auto it = uses.find(v);
        used = used || (it != uses.end() && it->second != 0);
      });
    if (used) continue;
    dead[i] = true;
    for (const auto &in : n.inputs) count(in.arg, -1);
  }
  std::unordered_set<std::string> gone;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (dead[i])
      for (const auto &o : g.nodes[i].outputs) forEachValueName(o, [&](const std::string &v) { gone.insert(v); });
  if (gone.empty() && std::find(dead.begin(), dead.end(), true) == dead.end()) return;
  std::vector<Node> live;
  live.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i]) live.push_back(std::move(g.nodes[i]));
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
