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
#include "IR/OrderedMap.h"

#include <cctype>
#include <algorithm>
#include <set>
#include <unordered_map>

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
    // Old name -> new. Every use in the method is looked up here: an OrderedMap
    // (open addressing, hash tags) costs far fewer cache misses than an unordered_map.
    OrderedMap<std::string> renames;
    StringMap<int> nextSuffix; // per base, so n same-op nodes name in O(n)
    renames.reserve(ep.graph.nodes.size()); // most nodes are renamed: no rehashing on the way
    // Names given here must not be given again. One base's names differ by their
    // suffix; two bases' names can meet only when one base is the other plus "_..."
    // (aten_x_default_1 from aten_x_default and from aten_x_default_1). Only then
    // are the given names kept in a set (the graph's own names are looked up in
    // tensorValues).
    std::vector<const std::string *> bases;
    bool baseClash = false;
    OrderedMap<bool> given;
    std::vector<std::string> givenTwice; // fresh names for an output name seen before (not in renames)
    auto extends = [](const std::string &longer, const std::string &shorter) {
      return longer.size() > shorter.size() && longer.compare(0, shorter.size(), shorter) == 0 &&
             longer[shorter.size()] == '_';
    };
    auto taken = [&](const std::string &name) {
      return ep.graph.tensorValues.contains(name) || (baseClash && given.contains(name));
    };
    // The base name per target string ("" when the node keeps its name) and its
    // suffix counter: a graph has few distinct targets, so each is parsed once.
    struct Base {
      std::string name;
      int *next = nullptr;
    };
    StringMap<Base> baseOf;
    // Per node: its output was renamed here already (the sweep below skips it).
    std::vector<uint8_t> outputDone(ep.graph.nodes.size(), 0);
    for (size_t index = 0; index < ep.graph.nodes.size(); ++index) {
      Node &node = ep.graph.nodes[index];
      if (node.outputs.size() != 1 || node.outputs[0].kind != ArgKind::Tensor) continue;
      auto [slot, unseen] = baseOf.try_emplace(node.target);
      if (unseen) {
        OpTarget t = targetOf(node);
        if (t.dialect == TargetDialect::Edge) {
          std::string name = lower(t.ns + "_" + t.name + "_" + (t.overload.empty() ? "default" : t.overload));
          auto [counter, newBase] = nextSuffix.try_emplace(name, 0);
          slot->second = {name, &counter->second};
          if (newBase) {
            for (const std::string *other : bases)
              if (!baseClash && (extends(name, *other) || extends(*other, name))) {
                baseClash = true; // from here on, check the names given so far too
                for (auto &[from, to] : renames) given.set(to, true);
                for (const auto &n : givenTwice) given.set(n, true);
              }
            bases.push_back(&counter->first);
          }
        }
      }
      const std::string &base = slot->second.name;
      if (base.empty()) continue;
      const std::string &current = node.outputs[0].name;
      if (current == base) continue;
      if (current.size() > base.size() && current.compare(0, base.size(), base) == 0 && current[base.size()] == '_' &&
          current.find_first_not_of("0123456789", base.size() + 1) == std::string::npos)
        continue; // already an edge-style name with a numeric suffix
      int &i = *slot->second.next;
      std::string fresh = i == 0 ? base : base + "_" + std::to_string(i);
      while (taken(fresh)) fresh = base + "_" + std::to_string(++i);
      ++i;
      if (baseClash) given.set(fresh, true);
      // The output takes its new name now (the one given to its name first),
      // which saves the sweep a lookup per node.
      if (const std::string *first = renames.find(current)) {
        if (!baseClash) givenTwice.push_back(std::move(fresh));
        node.outputs[0].name = *first;
      } else {
        node.outputs[0].name = renames.set(current, std::move(fresh));
      }
      outputDone[index] = 1;
    }
    if (renames.empty()) continue;
    // The renames in one sweep over the method, as renameValues does them.
    auto fix = [&](std::string &name) {
      if (const std::string *to = renames.find(name)) name = *to;
    };
    Graph &g = ep.graph;
    for (size_t index = 0; index < g.nodes.size(); ++index) {
      Node &n = g.nodes[index];
      for (auto &in : n.inputs) renameNamesIn(in.arg, fix);
      if (!outputDone[index])
        for (auto &out : n.outputs) renameNamesIn(out, fix);
    }
    for (auto &in : g.inputs) renameNamesIn(in, fix);
    for (auto &o : g.outputs) renameNamesIn(o, fix);
    for (auto &spec : ep.signature.inputSpecs) renameNamesIn(spec.arg, fix);
    for (auto &spec : ep.signature.outputSpecs) renameNamesIn(spec.arg, fix);
    // Keys renamed in place, each keeping its position (the JSON stays in
    // definition order); no new names collide: each fresh one was not taken.
    g.tensorValues.rewrite([&](std::string &name, TensorMeta &) {
      fix(name);
      return true;
    });
  }
}

void toEdgeOps(Program &program) {
  // The edge target per ATen target string ("" when it stays): parsed once per distinct target.
  StringMap<std::string> edgeTargets;
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
