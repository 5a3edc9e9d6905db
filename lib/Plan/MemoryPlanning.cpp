//===- Plan/MemoryPlanning.cpp - lifetimes, placement, plan record --------===//
//
// Lifetimes follow upstream (pte-format.md §5.3): placeholders are numbered
// first, then the nodes, then the output; each storage lives from its first to
// its last appearance (definition or use), inclusive. Values that share storage
// (an op's result and its alloc, a view and its base) are one storage. What is
// planned follows §5.4: user inputs and mutable buffers (per options), allocs,
// delegate and other node outputs; never constants. The placement itself is
// Placement.h's; the result is checked by the plan verifier before it is
// recorded in the method's MemoryPlan. Control-flow subgraphs (cond branches)
// are planned first, as upstream's apply_algo does, into a region at the start
// of the arenas; their values are recorded under their path
// ("true_graph_0/relu").
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanPasses.h"
#include "Plan/PlanVerifier.h"
#include "Support/Error.h"

#include <algorithm>
#include <sstream>
#include <string_view>
#include <unordered_set>

namespace exir::plan {

namespace {

// Offsets, arena sizes and the .pte's int64 buffer sizes must all stay below this.
constexpr uint64_t kMaxPlannedBytes = uint64_t(INT64_MAX);

// Bytes of `name` at the upper bounds of its dims; refuses sizes that overflow.
uint64_t byteSize(const std::string &name, const TensorMeta &meta, const ExportedProgram &ep) {
  uint64_t n = elementSize(meta.dtype);
  bool overflow = false;
  for (const auto &s : meta.sizes)
    overflow |= __builtin_mul_overflow(n, uint64_t(std::max<int64_t>(upperBound(s, ep), 0)), &n);
  if (overflow || n > kMaxPlannedBytes) {
    // The shape is spelled only for the error: this runs once per planned tensor.
    std::string shape;
    for (const auto &s : meta.sizes)
      shape += (shape.empty() ? "" : ", ") + std::to_string(std::max<int64_t>(upperBound(s, ep), 0));
    throw Error("tensor '" + name + "' cannot be planned: [" + shape + "] elements (dynamic dims at their upper bounds) of " +
                std::to_string(elementSize(meta.dtype)) + " bytes exceed 2^63-1 bytes");
  }
  return n;
}

// The planned tensors of one method together must fit, so no placement can overflow.
// `subgraph` is empty for a method's own graph, else the control-flow branch path.
void checkTotalSize(const std::vector<PlanItem> &items, uint64_t alignment, const std::string &subgraph) {
  uint64_t total = 0;
  for (const auto &item : items) {
    uint64_t aligned = item.size + (alignment - 1);
    if (aligned < item.size || __builtin_add_overflow(total, aligned, &total) || total > kMaxPlannedBytes)
      throw Error("the planned tensors of " + (subgraph.empty() ? std::string("the method") : "branch '" + subgraph + "'") +
                  " need more than 2^63-1 bytes together (at '" + item.name + "'; bound the dynamic dims lower)");
  }
}

uint32_t memIdFor(const PlanningOptions &options, const char *kind) {
  auto it = options.memIds.find(kind);
  return it == options.memIds.end() ? 1 : it->second;
}

} // namespace

namespace {

/// What planning needs to know about a method's storage: which values share
/// storage, what each storage is, and when it lives (pte-format.md §5.3).
/// Every tensor name of the graph gets a dense id: the names of tensor_values
/// are their positions there (so a walk over tensor_values needs no lookup),
/// other names follow; per use the work is one GraphValueIds lookup.
struct StorageAnalysis {
  enum : uint8_t { Constant = 1, UserInput = 2, MutableBuffer = 4, GraphOutput = 8, BoundInput = 16 };
  explicit StorageAnalysis(const Graph &g) : graph(&g), ids(g.tensorValues), numTensorValues(ids.numTensorValues()) {}
  const Graph *graph;
  GraphValueIds ids;                           // name -> id
  std::vector<const std::string *> otherNames; // id - numTensorValues -> name (points into the graph)
  uint32_t numTensorValues;                    // ids below this are tensor_values positions
  std::vector<uint32_t> root;             // id -> the id whose storage it uses
  std::vector<uint8_t> flags;             // id -> the enum above (set on the name itself)
  std::vector<std::pair<uint32_t, uint32_t>> life; // root id -> lifetime (touched roots only)
  std::vector<uint32_t> order;            // root ids, first appearance first
  /// Inputs of a subgraph (cond branch) are BoundInput: bound to the node's
  /// operands, which the enclosing graph plans; never planned here.
  std::unordered_map<uint32_t, std::string> bufferFqn; // mutable buffer placeholder id -> FQN
  bool hasSubgraphs = false; // a node takes a graph argument (cond)

  static constexpr uint32_t npos = UINT32_MAX;
  size_t size() const { return numTensorValues + otherNames.size(); }
  uint32_t find(const std::string &name) const { return ids.find(name); }
  uint32_t intern(const std::string &name) {
    uint32_t id = ids.intern(name);
    if (id == size()) otherNames.push_back(&name);
    return id;
  }
  bool is(uint32_t id, uint8_t flag) const { return flags[id] & flag; }
  const std::string &name(uint32_t id) const {
    return id < numTensorValues ? (graph->tensorValues.begin() + id)->first : *otherNames[id - numTensorValues];
  }
  /// Root id of a name; a name unknown to the graph is its own storage (npos).
  uint32_t rootOf(const std::string &n) const {
    uint32_t id = find(n);
    return id == npos ? npos : root[id];
  }
  /// The metadata of an id, null for names outside tensor_values.
  const TensorMeta *meta(const Graph &g, uint32_t id) const {
    return id < numTensorValues ? &(g.tensorValues.begin() + id)->second : nullptr;
  }
};

/// `ep` is null for a subgraph, whose inputs are bound to the operands of its node.
StorageAnalysis analyzeStorage(const Graph &g, const ExportedProgram *ep) {
  StorageAnalysis a(g);
  // Per name: where it is first and last used; `used` lists the ids in the
  // order of their first use.
  constexpr uint32_t untouched = UINT32_MAX;
  std::vector<std::pair<uint32_t, uint32_t>> seen(a.size(), {untouched, untouched});
  std::vector<uint32_t> used;
  used.reserve(a.size());
  // The names of the current node and their ids, so that the alias rules
  // (which name names of this node) need no second lookup.
  std::vector<std::pair<const std::string *, uint32_t>> local;
  DefinitionCursor cursor;
  auto nameAt = [&](uint32_t id) -> const std::string & { return a.name(id); };
  auto touch = [&](const std::string &name, uint32_t t, bool definition = false) {
    uint32_t id = definition ? cursor.match(name, a.numTensorValues, nameAt) : StorageAnalysis::npos;
    if (id == StorageAnalysis::npos) {
      id = a.intern(name);
      if (definition && id < a.numTensorValues) cursor.found(id);
    }
    if (id >= seen.size()) seen.resize(id + 1, {untouched, untouched});
    if (seen[id].first == untouched) {
      seen[id] = {t, t};
      used.push_back(id);
    } else {
      seen[id].second = t; // times only grow
    }
    local.emplace_back(&name, id);
  };
  auto idOf = [&](const std::string &name) {
    if (local.size() <= 32)
      for (const auto &[p, id] : local)
        if (p == &name) return id;
    return a.intern(name);
  };
  // Storage aliases (forEachStorageAlias's rules), found in the same walk.
  StorageAliasRules rules;
  std::vector<uint8_t> isAlloc(a.size(), 0);
  auto allocFlag = [&](const std::string &name) -> uint8_t & {
    uint32_t id = idOf(name);
    if (id >= isAlloc.size()) isAlloc.resize(id + 1, 0);
    return isAlloc[id];
  };
  std::vector<std::pair<uint32_t, uint32_t>> aliasPairs;
  uint32_t t = 0;
  for (const auto &in : g.inputs) {
    forEachTensorName(in, [&](const std::string &n) { touch(n, 0); });
    ++t;
  }
  for (const Node &node : g.nodes) {
    local.clear();
    for (const auto &in : node.inputs) {
      forEachTensorName(in.arg, [&](const std::string &n) { touch(n, t); });
      a.hasSubgraphs |= in.arg.kind == ArgKind::Graph;
    }
    for (const auto &o : node.outputs) forEachTensorName(o, [&](const std::string &n) { touch(n, t, true); });
    rules.node(
        node, [&](const std::string &n) { allocFlag(n) = 1; }, [&](const std::string &n) { return allocFlag(n) != 0; },
        [&](const std::string &value, const std::string &base) { aliasPairs.emplace_back(idOf(value), idOf(base)); });
    ++t;
  }
  // Names that only the aliases, the outputs or the signature mention: known, never used.
  for (const auto &o : g.outputs) forEachTensorName(o, [&](const std::string &name) { a.intern(name); });
  auto mark = [&](const std::string &name, uint8_t flag) {
    uint32_t id = a.intern(name);
    if (a.flags.size() <= id) a.flags.resize(a.size(), 0);
    a.flags[id] |= flag;
    return id;
  };
  if (!ep) {
    for (const auto &in : g.inputs)
      forEachTensorName(in, [&](const std::string &n) { mark(n, StorageAnalysis::BoundInput); });
  } else {
    std::unordered_set<std::string_view> mutatedBufferNames;
    for (const auto &spec : ep->signature.outputSpecs)
      if (spec.kind == OutputKind::BufferMutation) mutatedBufferNames.insert(spec.target);
    for (const auto &spec : ep->signature.inputSpecs) {
      if (spec.arg.kind != ArgKind::Tensor) continue;
      switch (spec.kind) {
      case InputKind::UserInput: mark(spec.arg.name, StorageAnalysis::UserInput); break;
      case InputKind::Buffer:
        if (mutatedBufferNames.count(spec.target)) {
          a.bufferFqn[mark(spec.arg.name, StorageAnalysis::MutableBuffer)] = spec.target;
        } else {
          mark(spec.arg.name, StorageAnalysis::Constant);
        }
        break;
      default: mark(spec.arg.name, StorageAnalysis::Constant); break;
      }
    }
  }
  size_t n = a.size();
  a.flags.resize(n, 0);
  seen.resize(n, {untouched, untouched});

  // Storage roots: follow the aliases (the last pair for a value wins).
  std::vector<uint32_t> target(n, StorageAnalysis::npos);
  for (const auto &[value, base] : aliasPairs) target[value] = base;
  a.root.assign(n, StorageAnalysis::npos);
  for (uint32_t id = 0; id < n; ++id) {
    uint32_t r = id;
    for (int guard = 0; target[r] != StorageAnalysis::npos; ++guard) {
      if (guard == 1000) throw InternalError("alias cycle at " + a.name(r));
      if (a.root[r] != StorageAnalysis::npos) break;
      r = target[r];
    }
    a.root[id] = a.root[r] != StorageAnalysis::npos ? a.root[r] : r;
  }

  // A storage lives from the first to the last use of any of its names; the
  // roots come in the order of their first use.
  a.life.assign(n, {untouched, 0});
  for (uint32_t id : used) {
    auto &life = a.life[a.root[id]];
    if (life.first == untouched) {
      life = seen[id];
      a.order.push_back(a.root[id]);
    } else {
      life.first = std::min(life.first, seen[id].first);
      life.second = std::max(life.second, seen[id].second);
    }
  }
  // The output node is a use; mutable buffers persist across runs, so they never die.
  auto extendTo = [&](uint32_t r, uint32_t time) {
    auto &life = a.life[r];
    if (life.first == untouched) {
      life = {time, time};
      a.order.push_back(r);
    } else {
      life.second = std::max(life.second, time);
    }
  };
  for (const auto &o : g.outputs)
    forEachTensorName(o, [&](const std::string &name) {
      uint32_t r = a.root[a.find(name)];
      a.flags[r] |= StorageAnalysis::GraphOutput;
      extendTo(r, t);
    });
  for (uint32_t id = 0; id < n; ++id)
    if (a.is(id, StorageAnalysis::MutableBuffer)) {
      auto &life = a.life[a.root[id]];
      life.second = t;
      if (life.first == untouched) life.first = 0; // never used: from the start, not ordered
    }
  return a;
}

StorageAnalysis analyzeStorage(const ExportedProgram &ep) { return analyzeStorage(ep.graph, &ep); }

/// Nodes with subgraph arguments (cond): node index -> the subgraphs and their paths.
using SubgraphsByNode = std::vector<std::pair<size_t, std::vector<std::pair<const Graph *, std::string>>>>;
SubgraphsByNode subgraphsByNode(const Graph &g, const std::string &path) {
  SubgraphsByNode out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::vector<std::pair<const Graph *, std::string>> subs;
    for (const auto &in : g.nodes[i].inputs)
      if (in.arg.kind == ArgKind::Graph && in.arg.graph()) subs.emplace_back(in.arg.graph().get(), scopedValueName(path, in.arg.graphName()));
    if (!subs.empty()) out.emplace_back(i, std::move(subs));
  }
  return out;
}

/// One graph's plan: its own storages placed after the regions reserved for its
/// subgraphs, and the allocation of every value in it and below it.
struct GraphPlan {
  std::vector<PlanItem> items;
  Placement placement;
  /// The allocation of every planned value of the graph (names in the graph,
  /// not scoped: the method's own graph copies each name once, into the plan),
  /// then those of the graphs below it (scoped names).
  std::vector<std::pair<const std::string *, Allocation>> own;
  std::vector<std::pair<std::string, Allocation>> allocations;
  /// Per arena: the bytes live at once at the busiest moment, branches included.
  std::vector<uint64_t> lowerBounds;
};

/// Plans the subgraphs of `g` first, as upstream's apply_algo does: each control-flow
/// node gets a region at the start of the arenas, as large as its largest branch
/// (the branches never run together). Unlike upstream, the regions of different
/// nodes do not share bytes: a cond's outputs are MoveCall'd from its branch
/// outputs, so the branch storage stays in use as long as the cond's outputs.
GraphPlan planGraph(const Graph &g, const std::string &path, const ExportedProgram &ep,
                    const PlanningOptions &options, const StorageAnalysis &a) {
  GraphPlan result;
  std::vector<uint64_t> reserved(2, 0);
  // (node time, the largest branch lower bound per arena) for the lower bound below.
  std::vector<std::pair<uint32_t, std::vector<uint64_t>>> branchBounds;
  for (const auto &[index, subs] : a.hasSubgraphs ? subgraphsByNode(g, path) : SubgraphsByNode()) {
    std::vector<uint64_t> nodeRegion(2, 0);
    branchBounds.emplace_back(uint32_t(g.inputs.size() + index), std::vector<uint64_t>(2, 0));
    for (const auto &[sub, subPath] : subs) {
      GraphPlan branch = planGraph(*sub, subPath, ep, options, analyzeStorage(*sub, nullptr));
      auto &bound = branchBounds.back().second;
      if (bound.size() < branch.lowerBounds.size()) bound.resize(branch.lowerBounds.size(), 0);
      for (size_t k = 1; k < branch.lowerBounds.size(); ++k) bound[k] = std::max(bound[k], branch.lowerBounds[k]);
      const auto &sizes = branch.placement.arenaSizes;
      if (nodeRegion.size() < sizes.size()) nodeRegion.resize(sizes.size(), 0);
      if (reserved.size() < sizes.size()) reserved.resize(sizes.size(), 0);
      for (size_t k = 1; k < sizes.size(); ++k) nodeRegion[k] = std::max(nodeRegion[k], sizes[k]);
      for (auto &[name, alloc] : branch.own) {
        alloc.offset += reserved[alloc.memId];
        result.allocations.emplace_back(scopedValueName(subPath, *name), alloc);
      }
      for (auto &[name, alloc] : branch.allocations) {
        alloc.offset += reserved[alloc.memId];
        result.allocations.emplace_back(std::move(name), alloc);
      }
    }
    for (size_t k = 1; k < nodeRegion.size(); ++k) reserved[k] += nodeRegion[k];
  }

  std::vector<uint32_t> itemOf(a.size(), StorageAnalysis::npos); // root id -> item
  for (uint32_t rootId : a.order) {
    if (a.is(rootId, StorageAnalysis::Constant | StorageAnalysis::BoundInput)) continue;
    const std::string &root = a.name(rootId);
    const TensorMeta *meta = a.meta(g, rootId);
    if (!meta) continue; // sym values, custom objects
    bool isInput = a.is(rootId, StorageAnalysis::UserInput);
    bool isBuffer = a.is(rootId, StorageAnalysis::MutableBuffer);
    bool isOutput = a.is(rootId, StorageAnalysis::GraphOutput);
    bool top = path.empty();
    if (isInput && !options.allocGraphInputs) continue;
    if (isBuffer && (!options.allocMutableBuffers || options.shareMutableBuffers)) continue;
    // Branch outputs are always planned (upstream plans submodules with alloc_graph_output).
    if (top && isOutput && !isInput && !options.allocGraphOutputs) continue;
    const char *kind = isBuffer ? "buffers" : isInput ? "inputs" : isOutput && top ? "outputs" : "activations";
    PlanItem item;
    item.name = scopedValueName(path, root);
    item.size = byteSize(item.name, *meta, ep);
    item.start = a.life[rootId].first;
    item.end = a.life[rootId].second;
    item.memId = memIdFor(options, kind);
    itemOf[rootId] = uint32_t(result.items.size());
    result.items.push_back(item);
  }
  checkTotalSize(result.items, options.alignment, path.empty() ? std::string() : path);
  PlanOptions planOptions;
  planOptions.alignment = options.alignment;
  result.placement = planMemory(result.items, options.algorithm, planOptions);
  verifyPlacement(result.items, result.placement, options.alignment);
  // Lower bound: this graph's own peak, or what is live at a control-flow node
  // plus its hungriest branch.
  result.lowerBounds = lowerBounds(result.items, options.alignment);
  for (const auto &[t, bound] : branchBounds) {
    if (result.lowerBounds.size() < bound.size()) result.lowerBounds.resize(bound.size(), 0);
    for (size_t k = 1; k < bound.size(); ++k) {
      uint64_t live = bound[k];
      for (const auto &item : result.items)
        if (item.memId == k && item.start <= t && t <= item.end) live += alignUp(item.size, options.alignment);
      result.lowerBounds[k] = std::max(result.lowerBounds[k], live);
    }
  }
  // Shift past the subgraph regions.
  auto &sizes = result.placement.arenaSizes;
  if (sizes.size() < reserved.size()) sizes.resize(reserved.size(), 0);
  for (size_t k = 1; k < reserved.size(); ++k) sizes[k] += reserved[k];
  for (size_t i = 0; i < result.items.size(); ++i) {
    uint32_t mem = result.items[i].memId;
    result.placement.offsets[i] += mem < reserved.size() ? reserved[mem] : 0;
  }
  // Every value name whose storage was planned gets the placement (aliases included),
  // so the emitter can look any value up directly.
  result.own.reserve(g.tensorValues.size());
  uint32_t id = 0; // tensor_values positions are ids
  for (const auto &[name, meta] : g.tensorValues) {
    uint32_t item = itemOf[a.root[id++]];
    if (item == StorageAnalysis::npos) continue;
    result.own.emplace_back(&name, Allocation{result.items[item].memId, result.placement.offsets[item]});
  }
  return result;
}

} // namespace

std::map<std::string, MethodPlanDetails> planProgram(Program &program, const PlanningOptions &options) {
  checkAlignment(options.alignment);
  if (options.shareMutableBuffers)
    for (const auto &[kind, id] : options.memIds)
      if (id != 1)
        throw Error("sharing mutable buffers across methods needs every other tensor in arena 1 (--mem-id " + kind +
                    "=" + std::to_string(id) + " given)");
  std::map<std::string, MethodPlanDetails> details;
  // FQN -> (bytes, placement) of the shared buffers, in first-seen order.
  std::vector<std::pair<std::string, uint64_t>> shared;
  std::map<std::string, size_t> sharedIndex;
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    const Graph &g = ep.graph;
    StorageAnalysis a = analyzeStorage(ep);
    if (options.shareMutableBuffers)
      for (uint32_t rootId : a.order) {
        if (!a.is(rootId, StorageAnalysis::MutableBuffer)) continue;
        const std::string &root = a.name(rootId);
        const std::string &fqn = a.bufferFqn.at(rootId);
        uint64_t bytes = byteSize(root, *a.meta(g, rootId), ep);
        auto it = sharedIndex.find(fqn);
        if (it == sharedIndex.end()) {
          sharedIndex[fqn] = shared.size();
          shared.emplace_back(fqn, bytes);
        } else if (shared[it->second].second != bytes) {
          throw Error("mutable buffer '" + fqn + "' has different sizes in different methods (" +
                          std::to_string(shared[it->second].second) + " and " + std::to_string(bytes) + " bytes)",
                      {}, "/methods/" + methodName);
        }
      }

    MethodPlanDetails d;
    GraphPlan gp = planGraph(g, "", ep, options, a);
    d.items = std::move(gp.items);
    d.placement = std::move(gp.placement);
    d.lowerBounds = std::move(gp.lowerBounds);

    MemoryPlan plan;
    plan.algorithm = d.placement.algorithm;
    plan.alignment = options.alignment;
    plan.bufferSizes = d.placement.arenaSizes;
    plan.lowerBounds = d.lowerBounds;
    plan.lowerBounds.resize(plan.bufferSizes.size(), 0);
    plan.allocations.reserve(gp.own.size() + gp.allocations.size());
    for (const auto &[name, alloc] : gp.own) plan.allocations.set(*name, alloc);
    for (const auto &[name, alloc] : gp.allocations) plan.allocations.set(name, alloc);
    method.plan = std::move(plan);
    details[methodName] = std::move(d);
  }
  if (options.shareMutableBuffers && !shared.empty()) {
    // One arena after the others, the buffers back to back: they live forever.
    std::vector<uint64_t> offsets;
    uint64_t size = 0;
    for (const auto &[fqn, bytes] : shared) {
      offsets.push_back(size);
      size += alignUp(bytes, options.alignment);
    }
    for (auto &[methodName, method] : program.methods) {
      MemoryPlan &plan = *method.plan;
      uint32_t arena = uint32_t(plan.bufferSizes.size());
      plan.bufferSizes.push_back(size);
      plan.lowerBounds.resize(plan.bufferSizes.size() - 1, 0);
      plan.lowerBounds.push_back(size);
      StorageAnalysis a = analyzeStorage(method.program);
      uint32_t id = 0; // tensor_values positions are ids
      for (const auto &[name, meta] : method.program.graph.tensorValues) {
        uint32_t rootId = a.root[id++];
        if (!a.is(rootId, StorageAnalysis::MutableBuffer)) continue;
        plan.allocations.set(name, Allocation{arena, offsets[sharedIndex.at(a.bufferFqn.at(rootId))]});
      }
    }
  }
  program.stage = Stage::Planned;
  return details;
}

namespace {

/// A placed storage of a subgraph, seen from an enclosing graph.
struct PlacedStorage {
  std::string name;
  uint32_t memId;
  uint64_t offset, size; // size aligned
};

/// Checks one graph's allocations (and, recursively, its subgraphs'); returns the
/// storages of the graph and everything below it.
std::vector<PlacedStorage> verifyGraphPlan(const Graph &g, const std::string &path, const ExportedProgram &ep,
                                           const StorageAnalysis &a, const MemoryPlan &plan,
                                           const std::string &methodName, MethodPlanDetails *details) {
  std::vector<PlanItem> items;
  Placement placement;
  placement.algorithm = plan.algorithm;
  placement.arenaSizes = plan.bufferSizes;
  // Each id's allocation. The method's own graph walks the allocations once
  // (one cheap lookup each, exir-emit runs this on every input); a subgraph
  // looks its few names up.
  std::vector<const Allocation *> allocOf(a.size(), nullptr);
  if (path.empty()) {
    // exir-plan writes the allocations in tensor_values order: try the name
    // after the last one matched before hashing (a compare of memory in cache).
    uint32_t next = 0;
    for (const auto &[key, alloc] : plan.allocations) {
      uint32_t id = next < a.numTensorValues && a.name(next) == key ? next : a.find(key);
      if (id == StorageAnalysis::npos) continue;
      allocOf[id] = &alloc;
      next = id + 1;
    }
  } else {
    for (uint32_t id = 0; id < a.size(); ++id)
      allocOf[id] = plan.allocations.find(scopedValueName(path, a.name(id)));
  }
  // Each storage's aliases, found once: ids grouped by root (counting sort).
  std::vector<uint32_t> aliasStart(a.size() + 1, 0), aliases;
  for (uint32_t id = 0; id < a.size(); ++id)
    if (a.root[id] != id) ++aliasStart[a.root[id] + 1];
  for (size_t r = 0; r < a.size(); ++r) aliasStart[r + 1] += aliasStart[r];
  aliases.resize(aliasStart.back());
  {
    std::vector<uint32_t> fill(aliasStart.begin(), aliasStart.end() - 1);
    for (uint32_t id = 0; id < a.size(); ++id)
      if (a.root[id] != id) aliases[fill[a.root[id]]++] = id;
  }
  for (uint32_t rootId : a.order) {
    const std::string &root = a.name(rootId);
    const Allocation *alloc = allocOf[rootId];
    const TensorMeta *meta = a.meta(g, rootId);
    if (!meta) continue;
    // Built only for an error or a planned item: most storages are planned, but
    // an error message needs the key anyway.
    auto where = [&] { return "/memory_plans/" + methodName + "/allocations/" + scopedValueName(path, root); };
    if (a.is(rootId, StorageAnalysis::Constant)) {
      if (alloc) throw Error("constant '" + root + "' must not be memory-planned", {}, where());
      continue;
    }
    if (a.is(rootId, StorageAnalysis::BoundInput)) continue;
    if (!alloc) {
      // Only graph inputs/outputs may be left to the caller; allocs must be planned.
      bool boundary = path.empty() && a.is(rootId, StorageAnalysis::UserInput | StorageAnalysis::GraphOutput);
      if (!boundary)
        throw Error("tensor '" + scopedValueName(path, root) + "' is produced inside the graph but has no allocation",
                    {}, where());
      continue;
    }
    // Every alias of a storage must sit where the storage sits.
    for (uint32_t k = aliasStart[rootId]; k < aliasStart[rootId + 1]; ++k) {
      uint32_t aliasId = aliases[k];
      const std::string &name = a.name(aliasId);
      if (const Allocation *other = allocOf[aliasId])
        if (!(*other == *alloc))
          throw Error("'" + name + "' shares storage with '" + root + "' but is placed elsewhere", {},
                      "/memory_plans/" + methodName + "/allocations/" + scopedValueName(path, name));
    }
    std::string key = scopedValueName(path, root);
    PlanItem item;
    item.name = key;
    item.size = byteSize(key, *meta, ep);
    item.start = a.life[rootId].first;
    item.end = a.life[rootId].second;
    item.memId = alloc->memId;
    items.push_back(std::move(item));
    placement.offsets.push_back(alloc->offset);
  }
  try {
    verifyPlacement(items, placement, plan.alignment);
  } catch (const Error &e) {
    // The placement verifier names the item; place it in the artifact's JSON.
    throw Error(e.message(), e.file(),
                "/memory_plans/" + methodName + (e.location().empty() ? "" : "/allocations/" + e.location()));
  }
  // A subgraph's storages are in use while its node runs and, through the
  // MoveCalls into the node's outputs, as long as those outputs live.
  struct Group {
    size_t node;
    uint32_t start, end;
    std::vector<PlacedStorage> storages;
  };
  std::vector<Group> groups;
  for (const auto &[index, subs] : a.hasSubgraphs ? subgraphsByNode(g, path) : SubgraphsByNode()) {
    uint32_t t = uint32_t(g.inputs.size() + index), end = t;
    for (const auto &o : g.nodes[index].outputs) {
      std::vector<std::string> names;
      o.collectTensorNames(names);
      for (const auto &n : names) {
        uint32_t rootId = a.rootOf(n);
        if (rootId != StorageAnalysis::npos && a.life[rootId].first != UINT32_MAX)
          end = std::max(end, a.life[rootId].second);
      }
    }
    for (const auto &[sub, subPath] : subs)
      groups.push_back({index, t, end,
                        verifyGraphPlan(*sub, subPath, ep, analyzeStorage(*sub, nullptr), plan, methodName, nullptr)});
  }
  // The storages as an enclosing graph or the checks below see them; a method
  // without control flow needs no copy of its 100k names.
  std::vector<PlacedStorage> all;
  if (!path.empty() || !groups.empty())
    for (size_t i = 0; i < items.size(); ++i)
      all.push_back({items[i].name, items[i].memId, placement.offsets[i], alignUp(items[i].size, plan.alignment)});
  auto overlap = [](const PlacedStorage &x, const PlacedStorage &y) {
    return x.memId == y.memId && x.size && y.size && x.offset < y.offset + y.size && y.offset < x.offset + x.size;
  };
  auto clash = [&](const PlacedStorage &x, const PlacedStorage &y) {
    throw Error("'" + x.name + "' and '" + y.name + "' overlap in memory while both are live (subgraph storage)", {},
                "/memory_plans/" + methodName + "/allocations/" + y.name);
  };
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group &grp = groups[gi];
    for (size_t i = 0; i < items.size(); ++i)
      if (!(items[i].end < grp.start || items[i].start > grp.end))
        for (const auto &s : grp.storages)
          if (overlap(all[i], s)) clash(all[i], s);
    for (size_t gj = gi + 1; gj < groups.size(); ++gj) {
      const Group &other = groups[gj];
      if (other.node == grp.node || grp.end < other.start || grp.start > other.end) continue;
      for (const auto &s : grp.storages)
        for (const auto &o : other.storages)
          if (overlap(s, o)) clash(s, o);
    }
  }
  if (details) {
    details->items = std::move(items);
    details->placement = std::move(placement);
  }
  for (const auto &grp : groups) all.insert(all.end(), grp.storages.begin(), grp.storages.end());
  return all;
}

} // namespace

std::map<std::string, MethodPlanDetails> verifyMemoryPlan(const Program &program) {
  std::map<std::string, MethodPlanDetails> details;
  for (const auto &[methodName, method] : program.methods) {
    if (!method.plan) throw Error("method has no memory plan", {}, "/memory_plans/" + methodName);
    const MemoryPlan &plan = *method.plan;
    const ExportedProgram &ep = method.program;
    MethodPlanDetails d;
    verifyGraphPlan(ep.graph, "", ep, analyzeStorage(ep), plan, methodName, &d);
    d.lowerBounds = lowerBounds(d.items, plan.alignment);
    details[methodName] = std::move(d);
  }
  return details;
}

std::string planReport(const Program &program, const std::map<std::string, MethodPlanDetails> &details) {
  std::ostringstream os;
  for (const auto &[methodName, d] : details) {
    const Method *m = program.methods.find(methodName);
    os << "method " << methodName << ": algorithm " << d.placement.algorithm << ", " << d.items.size()
       << " planned tensors\n";
    for (size_t k = 1; k < d.placement.arenaSizes.size(); ++k) {
      uint64_t planned = d.placement.arenaSizes[k];
      uint64_t bound = k < d.lowerBounds.size() ? d.lowerBounds[k] : 0;
      os << "  arena " << k << ": planned " << planned << " bytes, lower bound " << bound << " bytes, ratio ";
      if (bound) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", double(planned) / double(bound));
        os << buf;
      } else {
        os << "n/a";
      }
      os << "\n";
    }
    std::vector<size_t> idx(d.items.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&items = d.items](size_t a, size_t b) { return items[a].size > items[b].size; });
    os << "  biggest tensors:\n";
    for (size_t i = 0; i < idx.size() && i < 5; ++i) {
      const PlanItem &it = d.items[idx[i]];
      os << "    " << it.name << ": " << it.size << " bytes at mem " << it.memId << "+" << d.placement.offsets[idx[i]]
         << ", live [" << it.start << ", " << it.end << "]\n";
    }
    (void)m;
  }
  return os.str();
}

} // namespace exir::plan
