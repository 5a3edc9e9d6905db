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
#include "Support/Parallel.h"

#include <cctype>
#include <algorithm>
#include <set>
#include <unordered_map>

namespace exir::edge {

namespace {
/// Graphs with fewer nodes have their uses renamed on one thread: a second
/// one costs more than it saves there.
constexpr size_t kSweepBesideMinNodes = 4096;

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
    // Whether some value of the graph is named with this prefix ("aten_"): a
    // fresh name starts with its namespace's, and where no value does (a
    // torch.export graph names values after ops: addmm_3), the fresh names
    // need no lookup in tensorValues (a cache miss per node in a 100k table).
    StringMap<bool> prefixInValues;
    auto valuesHavePrefix = [&](const std::string &prefix) {
      auto [slot, unseen] = prefixInValues.try_emplace(prefix, false);
      if (unseen)
        for (const auto &[name, meta] : ep.graph.tensorValues)
          if (name.compare(0, prefix.size(), prefix) == 0) {
            slot->second = true;
            break;
          }
      return slot->second;
    };
    auto taken = [&](const std::string &name, bool inValues) {
      return (inValues && ep.graph.tensorValues.contains(name)) || (baseClash && given.contains(name));
    };
    // The base name per target string ("" when the node keeps its name) and its
    // suffix counter: a graph has few distinct targets, so each is parsed once.
    struct Base {
      std::string name;
      int *next = nullptr;
      bool mayBeInValues = true; // some value name starts like this base's names
    };
    StringMap<Base> baseOf;
    constexpr uint32_t kNone = UINT32_MAX, kDone = UINT32_MAX - 1;
    // Per node: the index in `renames` of its output's rename done here
    // already (the sweep below skips that output), kDone for an output given
    // the name its old one had, or kNone.
    std::vector<uint32_t> renameOf(ep.graph.nodes.size(), kNone);
    // Per tensorValues position: the index in `renames` of its new key, or kNone.
    std::vector<uint32_t> newKey(ep.graph.tensorValues.size(), kNone);
    // Where a node's output value sits in tensorValues: a compare or two from
    // where one of the last two was found, rarely a lookup. Values are listed
    // in definition order, except that those decompositions added follow the
    // graph's own: two runs, one hint each.
    size_t hints[2] = {0, 0};
    size_t lastHint = 0;
    auto valuePosition = [&](const std::string &key) {
      for (size_t k = 0; k < 2; ++k) {
        size_t &hint = hints[(lastHint + k) % 2];
        for (size_t pos = hint, end = std::min(ep.graph.tensorValues.size(), hint + 4); pos < end; ++pos)
          if ((ep.graph.tensorValues.begin() + std::ptrdiff_t(pos))->first == key) {
            hint = pos + 1;
            lastHint = (lastHint + k) % 2;
            return pos;
          }
      }
      size_t pos = positionOf(ep.graph.tensorValues, key);
      if (pos != kNoPosition) {
        lastHint ^= 1; // the run that did not just serve
        hints[lastHint] = pos + 1;
      }
      return pos;
    };
    // One bit per hash of the names in `renames` (128 KiB, fits the cache):
    // a name whose bit is clear was not renamed, without a probe of the
    // 150k-entry table (a graph input's uses, and each output before its rename).
    std::vector<uint64_t> renamedBits(size_t(1) << 14, 0);
    constexpr uint64_t kBitMask = (uint64_t(1) << 20) - 1;
    auto mayBeRenamed = [&](uint64_t hash) { return renamedBits[(hash & kBitMask) >> 6] >> (hash & 63) & 1; };
    for (size_t index = 0; index < ep.graph.nodes.size(); ++index) {
      Node &node = ep.graph.nodes[index];
      if (node.outputs.size() != 1 || node.outputs[0].kind != ArgKind::Tensor) continue;
      auto [slot, unseen] = baseOf.try_emplace(node.target);
      if (unseen) {
        OpTarget t = targetOf(node);
        if (t.dialect == TargetDialect::Edge) {
          std::string name = lower(t.ns + "_" + t.name + "_" + (t.overload.empty() ? "default" : t.overload));
          auto [counter, newBase] = nextSuffix.try_emplace(name, 0);
          slot->second = {name, &counter->second, valuesHavePrefix(lower(t.ns + "_"))};
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
      const bool inValues = slot->second.mayBeInValues;
      std::string fresh = i == 0 ? base : base + "_" + std::to_string(i);
      while (taken(fresh, inValues)) fresh = base + "_" + std::to_string(++i);
      ++i;
      if (baseClash) given.set(fresh, true);
      // The output takes its new name now (the one given to its name first),
      // which saves the sweep a lookup per node.
      const uint64_t currentHash = hashString(current);
      if (const std::string *first = mayBeRenamed(currentHash) ? renames.find(current) : nullptr) {
        if (!baseClash) givenTwice.push_back(std::move(fresh));
        node.outputs[0].name = *first;
        renameOf[index] = kDone;
        continue;
      }
      size_t pos = valuePosition(current); // for the key's rename below
      uint32_t item = uint32_t(renames.size());
      renamedBits[(currentHash & kBitMask) >> 6] |= uint64_t(1) << (currentHash & 63);
      node.outputs[0].name = renames.set(current, std::move(fresh));
      if (pos != kNoPosition) newKey[pos] = item;
      renameOf[index] = item;
    }
    if (renames.empty()) continue;
    // The renames in one sweep over the method, as renameValues does them.
    auto fix = [&](std::string &name) {
      if (const std::string *to = renames.find(name)) name = *to;
    };
    // From here `renames` is only read: the nodes' sweep is split between two
    // threads on a big graph (each node's names are its own).
    Graph &g = ep.graph;
    auto sweep = [&](size_t begin, size_t end) {
      // A use mostly reads a value one of the last few nodes defined: their
      // renames (old name, new) are compared first, in place of a lookup.
      constexpr size_t kRecent = 4;
      uint32_t recent[kRecent] = {kNone, kNone, kNone, kNone};
      size_t recentNext = 0;
      auto fixUse = [&](std::string &name) {
        for (uint32_t item : recent)
          if (item != kNone) {
            const auto &[from, to] = *(renames.begin() + std::ptrdiff_t(item));
            if (from == name) {
              name = to;
              return;
            }
          }
        if (mayBeRenamed(hashString(name))) fix(name);
      };
      for (size_t index = begin; index < end; ++index) {
        Node &n = g.nodes[index];
        for (auto &in : n.inputs) renameNamesIn(in.arg, fixUse);
        if (renameOf[index] == kNone)
          for (auto &out : n.outputs) renameNamesIn(out, fix);
        else if (renameOf[index] != kDone)
          recent[recentNext++ % kRecent] = renameOf[index];
      }
    };
    if (g.nodes.size() >= kSweepBesideMinNodes) {
      const size_t mid = g.nodes.size() / 2;
      runBeside([&] { sweep(0, mid); }, [&] { sweep(mid, g.nodes.size()); });
    } else {
      sweep(0, g.nodes.size());
    }
    for (auto &in : g.inputs) renameNamesIn(in, fix);
    for (auto &o : g.outputs) renameNamesIn(o, fix);
    for (auto &spec : ep.signature.inputSpecs) renameNamesIn(spec.arg, fix);
    for (auto &spec : ep.signature.outputSpecs) renameNamesIn(spec.arg, fix);
    // Keys renamed in place, each keeping its position (the JSON stays in
    // definition order); no new names collide: each fresh one was not taken.
    size_t pos = 0;
    g.tensorValues.rewrite([&](std::string &name, TensorMeta &) {
      if (uint32_t item = newKey[pos++]; item != kNone) name = (renames.begin() + std::ptrdiff_t(item))->second;
      return true;
    });
  }
}

void toEdgeOps(Program &program) {
  // Per ATen target string, parsed once: its edge target ("" when it stays),
  // and whether its nodes may take subgraphs (a higher-order op's branches).
  struct Renamed {
    std::string edge;
    bool higherOrder = false;
  };
  StringMap<Renamed> edgeTargets;
  // Branches of cond and other higher-order ops are converted like the method
  // (their value names are left alone: they are local to the subgraph). Only
  // those ops' operands are looked at: an ATen op takes no graph.
  std::function<void(Graph &)> rename = [&](Graph &graph) {
    for (Node &node : graph.nodes) {
      auto [slot, unseen] = edgeTargets.try_emplace(node.target);
      if (unseen) {
        OpTarget t = targetOf(node);
        if (t.dialect == TargetDialect::Aten && !staysAtenInEdge(t)) slot->second.edge = edgeTarget(t.ns, t.name, t.overload);
        slot->second.higherOrder = t.dialect != TargetDialect::Aten && t.dialect != TargetDialect::Edge;
      }
      if (slot->second.higherOrder)
        for (auto &in : node.inputs)
          if (in.arg.kind == ArgKind::Graph && in.arg.graph()) rename(*in.arg.graph());
      if (!slot->second.edge.empty()) node.target = slot->second.edge;
    }
  };
  for (auto &[methodName, method] : program.methods) rename(method.program.graph);
  renameEdgeNodes(program);
}

} // namespace exir::edge
