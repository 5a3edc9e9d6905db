//===- Edge/ToEdgeOps.cpp - rename targets into the edge namespace --------===//
//
// Every ATen or custom-namespace op becomes its edge op
// (torch.ops.aten.add.Tensor -> executorch.exir.dialects.edge.ops.aten.add.Tensor),
// except the ops upstream keeps as they are (sym ops such as sym_size.int and
// the _assert_* / scalar_tensor disallow list, see staysAtenInEdge) and
// higher-order ops; the nodes of their subgraphs (cond branches) are converted too.
// Single-output nodes are renamed the way torch.fx names edge nodes
// (aten_add_tensor, aten_add_tensor_1, ...), so our graphs print like the
// Python pipeline's.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"

#include <cctype>
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace exir::edge {

namespace {
std::string lower(std::string s) {
  for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
} // namespace

void renameEdgeNodes(Program &program) {
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    std::unordered_map<std::string, std::string> renames;
    std::unordered_map<std::string, int> nextSuffix; // per base, so n same-op nodes name in O(n)
    // Names given here; the graph's own names are looked up in tensorValues
    // (copying 100k names into a set cost more than the renaming).
    std::unordered_set<std::string> given;
    renames.reserve(ep.graph.nodes.size()); // most nodes are renamed: no rehashing on the way
    given.reserve(ep.graph.nodes.size());
    auto taken = [&](const std::string &name) { return ep.graph.tensorValues.contains(name) || given.count(name); };
    // The base name per target string ("" when the node keeps its name): a graph
    // has few distinct targets, so each is parsed once.
    std::unordered_map<std::string, std::string> baseOf;
    for (Node &node : ep.graph.nodes) {
      if (node.outputs.size() != 1 || node.outputs[0].kind != ArgKind::Tensor) continue;
      auto [slot, unseen] = baseOf.try_emplace(node.target);
      if (unseen) {
        OpTarget t = targetOf(node);
        if (t.dialect == TargetDialect::Edge)
          slot->second = lower(t.ns + "_" + t.name + "_" + (t.overload.empty() ? "default" : t.overload));
      }
      const std::string &base = slot->second;
      if (base.empty()) continue;
      const std::string &current = node.outputs[0].name;
      if (current == base) continue;
      if (current.size() > base.size() && current.compare(0, base.size(), base) == 0 && current[base.size()] == '_' &&
          current.find_first_not_of("0123456789", base.size() + 1) == std::string::npos)
        continue; // already an edge-style name with a numeric suffix
      int &i = nextSuffix[base];
      std::string fresh = i == 0 ? base : base + "_" + std::to_string(i);
      while (taken(fresh)) fresh = base + "_" + std::to_string(++i);
      ++i;
      given.insert(fresh);
      renames.emplace(current, std::move(fresh));
    }
    renameValues(ep, renames);
  }
}

void toEdgeOps(Program &program) {
  // The edge target per ATen target string ("" when it stays): parsed once per distinct target.
  std::unordered_map<std::string, std::string> edgeTargets;
  auto rename = [&edgeTargets](Graph &graph, const std::string &) {
    for (Node &node : graph.nodes) {
      auto [slot, unseen] = edgeTargets.try_emplace(node.target);
      if (unseen) {
        OpTarget t = targetOf(node);
        if (t.dialect == TargetDialect::Aten && !staysAtenInEdge(t)) slot->second = edgeTarget(t.ns, t.name, t.overload);
      }
      if (!slot->second.empty()) node.target = slot->second;
    }
  };
  for (auto &[methodName, method] : program.methods) {
    rename(method.program.graph, "");
    // Branches of cond and other higher-order ops are converted like the method
    // (their value names are left alone: they are local to the subgraph).
    forEachSubgraph(method.program.graph, rename);
  }
  renameEdgeNodes(program);
}

} // namespace exir::edge
