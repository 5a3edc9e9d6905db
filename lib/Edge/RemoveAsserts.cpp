//===- Edge/RemoveAsserts.cpp - drop runtime asserts and what only they use ===//
//
// torch.export records shape and metadata checks as graph nodes
// (_assert_tensor_metadata, _assert_scalar, _assert_async, sym_constrain_range*).
// The runtime has no kernels for them and the guards already held at export, so
// they go, as upstream's RemoveGraphAssertsPass removes them; the symbolic
// comparisons (_operator.ge, ...) that only fed them are then dead and go too.
// Two linear sweeps: delete the asserts, then dead symbolic ops back to front.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"

#include <unordered_map>
#include <type_traits>
#include <unordered_set>

namespace exir::edge {

namespace {

bool isAssert(const Node &node) {
  OpTarget t = targetOf(node);
  if (t.dialect != TargetDialect::Aten || t.ns != "aten") return false;
  static const std::unordered_set<std::string> names = {
      "_assert_tensor_metadata", "_assert_scalar",     "_assert_async",
      "sym_constrain_range",     "sym_constrain_range_for_size", "_functional_assert_scalar",
      "_functional_assert_async", "_functional_sym_constrain_range",
      "_functional_sym_constrain_range_for_size"};
  return names.count(t.name) != 0;
}

void removeAsserts(ExportedProgram &ep) {
  Graph &g = ep.graph;
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (Node &n : g.nodes)
    if (!isAssert(n)) kept.push_back(std::move(n));
  g.nodes = std::move(kept);

  // Dead symbolic ops: count uses, then drop unused sym nodes from the back so a
  // chain (ge <- sym_size) disappears in one sweep.
  std::unordered_map<std::string, size_t> uses;
  std::vector<std::string> names;
  auto countIn = [&](const Argument &a, int delta) {
    names.clear();
    a.collectValueNames(names);
    for (const auto &n : names) uses[n] += size_t(delta);
  };
  for (const Node &n : g.nodes)
    for (const auto &in : n.inputs) countIn(in.arg, 1);
  for (const auto &o : g.outputs) countIn(o, 1);
  std::vector<bool> dead(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node &n = g.nodes[i];
    OpTarget t = targetOf(n);
    bool symOp = t.dialect == TargetDialect::SymOp ||
                 (t.dialect == TargetDialect::Aten && t.ns == "aten" && t.name.rfind("sym_", 0) == 0);
    if (!symOp || n.outputs.empty()) continue;
    bool used = false;
    for (const auto &o : n.outputs) {
      names.clear();
      o.collectValueNames(names);
      for (const auto &v : names) used = used || uses[v] != 0;
    }
    if (used) continue;
    dead[i] = true;
    for (const auto &in : n.inputs) countIn(in.arg, -1);
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
    std::remove_reference_t<decltype(values)> kept;
    for (auto &[name, v] : values)
      if (!gone.count(name)) kept.set(name, v);
    values = std::move(kept);
  };
  if (!gone.empty()) {
    prune(g.symIntValues);
    prune(g.symBoolValues);
    prune(g.symFloatValues);
  }
  g.nodes = std::move(live);
}

} // namespace

void removeGraphAsserts(Program &program) {
  for (auto &[name, method] : program.methods) removeAsserts(method.program);
}

} // namespace exir::edge
