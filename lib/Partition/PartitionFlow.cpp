//===- Partition/PartitionFlow.cpp - Flow 3: a partitioner's tags become delegates ===//
//
// Fusing a partition follows upstream's create_submodule_from_nodes and
// create_exported_program_from_submodule (pte-format.md §7.3):
//  - the subgraph's inputs are the constants the delegate owns, then the
//    outside values it reads in order of first use;
//  - its outputs are the values of partition nodes used outside, in node order;
//  - the call node replaces the partition where its last node was, and the
//    graph is re-sorted topologically (stably), so users that sat between
//    partition nodes move after the call.
//
// Two paths give the same program. The stepwise one does exactly the above,
// one partition at a time, each step a pass over the whole method: simple, the
// reference, and quadratic in the number of partitions (a 100k-node llama has
// thousands). The incremental one (IncrementalFusion) keeps, across steps, the
// node order with positions, who defines and who uses each value, the node
// names and the values whose erasure is pending, so a step costs the size of
// its partition and of the stretch of graph its nodes span. It runs when the
// graph is in topological order and contracting every tag leaves it acyclic:
// then no step can close a cycle, and the stable re-sort after a fusion only
// moves, within that stretch, the nodes that depend on the call, behind it.
// Otherwise the stepwise path runs; it then fails, since the last tag of a
// cycle to be fused closes it, and its error names the node to split at.
// tests/Partition/PartitionFlowTest.cpp checks the paths agree, errors included.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "IR/ValueNames.h"
#include "Partition/Fusion.h"
#include "Partition/Lowering.h"
#include "Partition/LoweringDetail.h"
#include "Support/Error.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace exir::partition {

using namespace detail;

namespace {

/// Upstream to_backend's tag rules (pte-format.md §7.2), in one pass over the
/// nodes: the first violation in node order, then in input order.
void checkTags(const ExportedProgram &ep, const PartitionResult &result, const std::string &where) {
  const Graph &g = ep.graph;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const std::string &tag = result.nodeTags[i];
    if (tag.empty()) continue;
    const Node &node = g.nodes[i];
    if (!result.partitionTags.contains(tag))
      throw Error("node is tagged '" + tag + "', which the partitioner gave no backend for", {},
                  where + ", node " + node.displayName());
    if (parseTarget(node.target).dialect != TargetDialect::Edge)
      throw Error("only edge-dialect ops can be delegated, not " + node.target, {}, where + ", node " + node.displayName());
  }
  // A tagged constant's users must all carry its tag: the first user that
  // does not, per tagged input.
  std::unordered_map<std::string, size_t> taggedInput;
  for (size_t k = 0; k < g.inputs.size(); ++k)
    if (!result.inputTags[k].empty()) taggedInput.emplace(g.inputs[k].name, k);
  std::vector<size_t> firstStranger(g.inputs.size(), SIZE_MAX);
  if (!taggedInput.empty())
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      std::vector<std::string> uses;
      for (const auto &in : g.nodes[i].inputs) in.arg.collectTensorNames(uses);
      for (const auto &u : uses)
        if (auto it = taggedInput.find(u); it != taggedInput.end())
          if (result.nodeTags[i] != result.inputTags[it->second] && firstStranger[it->second] == SIZE_MAX)
            firstStranger[it->second] = i;
    }
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const std::string &tag = result.inputTags[k];
    if (tag.empty()) continue;
    InputKind kind = ep.signature.inputSpecs.at(k).kind;
    if (kind != InputKind::Parameter && kind != InputKind::Buffer && kind != InputKind::TensorConstant)
      throw Error("graph input '" + g.inputs[k].name +
                      "' is tagged but only parameters, buffers and constants can be owned by a delegate",
                  {}, where);
    if (firstStranger[k] != SIZE_MAX)
      throw Error("constant '" + g.inputs[k].name + "' is tagged '" + tag + "' but its user " +
                      g.nodes[firstStranger[k]].displayName() + " is not",
                  {}, where);
  }
}

/// The spec a tag is lowered with, after --backend and --compile-spec.
DelegationSpec effectiveSpec(const DelegationSpec &chosen, const LoweringOptions &options) {
  DelegationSpec spec = chosen;
  if (options.backendOverride) {
    spec.backendId = *options.backendOverride;
    spec.preprocessor.clear();
  }
  if (options.compileSpecOverride) spec.compileSpecs = *options.compileSpecOverride;
  return spec;
}

//===----------------------------------------------------------------------===//
// Stepwise path
//===----------------------------------------------------------------------===//

/// Graph inputs (by index) that are not user-visible: owned constants leave.
void eraseInputs(ExportedProgram &ep, std::vector<size_t> indices) {
  std::sort(indices.rbegin(), indices.rend());
  for (size_t k : indices) {
    const std::string name = ep.graph.inputs[k].name;
    ep.graph.inputs.erase(ep.graph.inputs.begin() + std::ptrdiff_t(k));
    ep.signature.inputSpecs.erase(ep.signature.inputSpecs.begin() + std::ptrdiff_t(k));
    ep.graph.tensorValues.erase(name);
  }
}

/// Replaces the partition's nodes in `ep` by a call to `delegateName`.
/// `tags` is kept aligned with the node list (the call node gets "").
void fuseIntoCall(ExportedProgram &ep, std::vector<std::string> &tags, const std::vector<size_t> &nodes,
                  const Subgraph &sub, const std::string &delegateName) {
  Graph &g = ep.graph;
  int64_t handle = maxDebugHandle(g) + 1;
  std::vector<std::string> results;
  for (const auto &out : sub.outputs) {
    std::string name = g.freshName("getitem");
    g.tensorValues.set(name, edge::metaOf(g, out));
    results.push_back(name);
  }
  Node call = makeDelegateCall(freshNodeName(g, "executorch_call_delegate"), delegateName, sub.userInputs, results, handle);
  std::set<size_t> member(nodes.begin(), nodes.end());
  std::vector<Node> kept;
  std::vector<std::string> keptTags;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!member.count(i)) {
      kept.push_back(std::move(g.nodes[i]));
      keptTags.push_back(tags[i]);
      continue;
    }
    std::vector<std::string> defined;
    for (const auto &o : g.nodes[i].outputs) o.collectTensorNames(defined);
    for (const auto &n : defined)
      if (std::find(sub.outputs.begin(), sub.outputs.end(), n) == sub.outputs.end()) g.tensorValues.erase(n);
    if (i == *member.rbegin()) {
      kept.push_back(std::move(call));
      keptTags.push_back("");
    }
  }
  g.nodes = std::move(kept);
  for (size_t k = 0; k < sub.outputs.size(); ++k) {
    edge::replaceUses(ep, sub.outputs[k], results[k]);
    g.tensorValues.erase(sub.outputs[k]);
  }
  std::vector<size_t> order = stableTopologicalOrder(g);
  std::vector<Node> sorted;
  std::vector<std::string> sortedTags;
  for (size_t i : order) {
    sorted.push_back(std::move(g.nodes[i]));
    sortedTags.push_back(keptTags[i]);
  }
  g.nodes = std::move(sorted);
  tags = std::move(sortedTags);
}

/// Lowers every tag of `result`, one pass over the method per tag.
void lowerStepwise(Program &program, const std::string &methodName, ExportedProgram &ep, const PartitionResult &result,
                   const LoweringOptions &options, LoweringReport &report) {
  std::string where = "method " + methodName;
  std::vector<std::string> tags = result.nodeTags;
  std::vector<std::string> inputTags = result.inputTags;
  for (const auto &[tag, chosen] : result.partitionTags) {
    std::vector<size_t> nodes;
    for (size_t i = 0; i < tags.size(); ++i)
      if (tags[i] == tag) nodes.push_back(i);
    if (nodes.empty()) continue;
    // Checked on the current graph: fusing an earlier tag can close a cycle
    // through this one even when both were convex in the original graph.
    if (auto witness = findCycleWitness(NodeDependencies::of(ep.graph), nodes))
      throw Error("partition '" + tag + "' would create a dependency cycle: " + ep.graph.nodes[*witness].displayName() +
                      " depends on the partition and feeds it; split the partition there",
                  {}, where);
    std::vector<size_t> owned;
    for (size_t k = 0; k < inputTags.size(); ++k)
      if (inputTags[k] == tag) owned.push_back(k);

    DelegationSpec spec = effectiveSpec(chosen, options);
    const Backend &backend = options.backends->require(spec.preprocessorId());

    std::vector<const Node *> members;
    std::vector<bool> member(ep.graph.nodes.size(), false);
    for (size_t i : nodes) {
      members.push_back(&ep.graph.nodes[i]);
      member[i] = true;
    }
    std::unordered_set<std::string> usedOutside;
    for (size_t i = 0; i < ep.graph.nodes.size(); ++i) {
      if (member[i]) continue;
      std::vector<std::string> uses;
      for (const auto &in : ep.graph.nodes[i].inputs) in.arg.collectTensorNames(uses);
      usedOutside.insert(uses.begin(), uses.end());
    }
    for (const auto &o : ep.graph.outputs) {
      std::vector<std::string> uses;
      o.collectTensorNames(uses);
      usedOutside.insert(uses.begin(), uses.end());
    }
    Subgraph sub = extractSubgraph(ep, members, owned, [&](const std::string &n) { return usedOutside.count(n) > 0; });
    std::string name = nextDelegateName(program);
    PreprocessResult pre =
        runPreprocess(backend, sub.program, spec.compileSpecs, where + ", partition " + tag + " (" + name + ")", report);
    fuseIntoCall(ep, tags, nodes, sub, name);
    eraseInputs(ep, owned);
    for (auto it = owned.rbegin(); it != owned.rend(); ++it) inputTags.erase(inputTags.begin() + std::ptrdiff_t(*it));

    Delegate d = makeDelegate(program, spec.backendId, spec.compileSpecs, std::move(pre.processedBytes),
                              std::move(sub.program));
    report.delegatesCreated.push_back(describeDelegate(name, methodName, d, nodes.size()));
    program.delegates.set(name, std::move(d));
  }
}

//===----------------------------------------------------------------------===//
// Incremental path
//===----------------------------------------------------------------------===//

/// Each tag's nodes (ascending) in lowering order; tags without nodes left out.
std::vector<std::pair<std::string, std::vector<size_t>>> nodesByTag(const PartitionResult &result) {
  std::unordered_map<std::string, size_t> slot;
  std::vector<std::pair<std::string, std::vector<size_t>>> out;
  for (const auto &[tag, spec] : result.partitionTags) {
    slot.emplace(tag, out.size());
    out.push_back({tag, {}});
  }
  for (size_t i = 0; i < result.nodeTags.size(); ++i)
    if (!result.nodeTags[i].empty()) out[slot.at(result.nodeTags[i])].second.push_back(i);
  return out;
}

/// The node dependencies of the method: the partitioner's when it kept them.
std::shared_ptr<const NodeDependencies> dependenciesOf(const Graph &g, const PartitionResult &result) {
  if (result.dependencies && result.dependencies->users.size() == g.nodes.size()) return result.dependencies;
  return std::make_shared<const NodeDependencies>(NodeDependencies::of(g));
}

/// Whether the incremental path reproduces the stepwise one on this method:
/// every value is defined once, the nodes are in topological order, and the
/// graph with each tag contracted to one vertex is acyclic.
bool incrementalApplies(const Graph &g, const PartitionResult &result, const NodeDependencies &deps) {
  if (!deps.definedOnce) return false;
  size_t n = g.nodes.size();
  for (size_t i = 0; i < n; ++i)
    if (!deps.producers[i].empty() && deps.producers[i].back() >= i) return false;
  // Vertex of a node: its tag's, or its own.
  std::unordered_map<std::string, size_t> tagVertex;
  std::vector<size_t> vertex(n);
  size_t vertices = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::string &tag = result.nodeTags[i];
    if (tag.empty()) {
      vertex[i] = vertices++;
      continue;
    }
    auto [it, fresh] = tagVertex.emplace(tag, vertices);
    if (fresh) ++vertices;
    vertex[i] = it->second;
  }
  return contractedGraphIsAcyclic(deps, vertex);
}

/// The method's graph while its partitions are fused one by one, with what a
/// step needs to stay local. Nodes have stable ids (their original index; calls
/// get the next ones); `order_` lists ids in graph order with holes where nodes
/// left. Erasing values and inputs waits for finish(), except that a value
/// name about to be reused is erased first so the tables keep torch's order.
///
/// Who produces and who uses what is kept by node id, not by value name: the
/// method's NodeDependencies for the original nodes (fixed), plus the edges
/// each fusion adds to and from its call. An edge to a node fused since is
/// left in place and skipped (the node is no longer alive, and the call that
/// replaced it has its own edge). Maps keyed by value name, filled for every
/// node and looked up for every use, were a third of the fusion's time.
class IncrementalFusion {
public:
  /// `deps`: the method's node dependencies (kept by reference); `calls`: how
  /// many partitions will be fused (room for their call nodes).
  IncrementalFusion(ExportedProgram &ep, const NodeDependencies &deps, size_t calls)
      : ep_(ep), g_(ep.graph), deps_(deps) {
    nextHandle_ = maxDebugHandle(g_) + 1;
    pool_ = std::move(g_.nodes);
    g_.nodes.clear();
    size_t n = pool_.size();
    // Call nodes go to their own vector: growing the pool would move every node.
    calls_.reserve(calls);
    alive_.assign(n, true);
    member_.assign(n, false);
    dependsOnCall_.assign(n, false);
    addedProducers_.resize(n);
    addedUsers_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      order_.push_back(i);
      pos_.push_back(i);
      registerNode(i);
    }
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      edge::renameNamesIn(g_.outputs[k], [&](std::string &s) { outputUses_[s].push_back(k); });
      std::vector<std::string> names;
      g_.outputs[k].collectTensorNames(names);
      outputTensors_.insert(names.begin(), names.end());
    }
    for (size_t k = 0; k < ep_.signature.outputSpecs.size(); ++k)
      edge::renameNamesIn(ep_.signature.outputSpecs[k].arg, [&](std::string &s) { specUses_[s].push_back(k); });
    inputErased_.assign(g_.inputs.size(), false);
  }

  /// The nodes `ids` in current graph order.
  std::vector<size_t> inGraphOrder(std::vector<size_t> ids) const {
    std::sort(ids.begin(), ids.end(), [&](size_t a, size_t b) { return pos_[a] < pos_[b]; });
    return ids;
  }
  const Node &node(size_t id) const { return id < pool_.size() ? pool_[id] : calls_[id - pool_.size()]; }

  /// Marks the partition about to be extracted (usedOutside looks past it)
  /// and notes which member defines each of its tensors (for usedOutside and
  /// fuse, which follow with the same members).
  void setMembers(const std::vector<size_t> &ids, bool on) {
    for (size_t id : ids) member_[id] = on;
    if (!on) return;
    definedByMember_.clear();
    for (size_t id : ids)
      for (const auto &o : node(id).outputs)
        forEachTensorName(o, [&](const std::string &name) { definedByMember_.emplace(name, id); });
  }
  /// Whether a tensor the partition defines is read by a node outside it or by the graph's outputs.
  bool usedOutside(const std::string &name) const {
    if (outputTensors_.count(name)) return true;
    auto it = definedByMember_.find(name);
    if (it == definedByMember_.end()) throw InternalError("usedOutside: '" + name + "' is not defined by a partition");
    bool used = false;
    forEachUser(it->second, [&](size_t id) {
      if (used || !alive_[id] || member_[id]) return;
      for (const auto &in : node(id).inputs)
        forEachTensorName(in.arg, [&](const std::string &u) { used = used || u == name; });
    });
    return used;
  }

  /// Moves the members `ids` (in graph order) into `sub`'s node list: they
  /// leave the method with this step, and copying them (metadata included)
  /// was a third of the fusion's time on llama-100k. putBack undoes it for a
  /// step that fails before fuse().
  void moveInto(const std::vector<size_t> &ids, Subgraph &sub) {
    for (size_t id : ids) sub.program.graph.nodes.push_back(std::move(mutableNode(id)));
  }
  void putBack(const std::vector<size_t> &ids, Subgraph &sub) {
    for (size_t k = 0; k < ids.size() && k < sub.program.graph.nodes.size(); ++k)
      mutableNode(ids[k]) = std::move(sub.program.graph.nodes[k]);
    sub.program.graph.nodes.clear();
  }

  /// fuseIntoCall and eraseInputs of the stepwise path for the members `ids`
  /// (in graph order), which moveInto has moved to `sub`, and the owned inputs
  /// `owned` (original indices).
  void fuse(const std::vector<size_t> &ids, const std::vector<size_t> &owned, const Subgraph &sub,
            const std::string &delegateName) {
    auto released = [&](const std::string &n) { return pendingErase_.count(n) > 0; };
    int64_t handle = nextHandle_++;
    std::vector<std::string> results;
    for (const auto &out : sub.outputs) {
      std::string name = g_.freshName("getitem", released);
      if (pendingErase_.count(name)) flushErasures(); // re-adding a name: it goes to the end, as after an erase
      g_.tensorValues.set(name, edge::metaOf(g_, out));
      results.push_back(name);
    }
    std::string callName;
    for (size_t k = callNameFloor_;; ++k) {
      callName = k ? std::string(kCallName) + "_" + std::to_string(k) : std::string(kCallName);
      auto it = nodeNames_.find(callName);
      if ((it == nodeNames_.end() || it->second == 0) && g_.freshName(callName, released) == callName) {
        callNameFloor_ = k + 1;
        break;
      }
    }
    size_t first = SIZE_MAX, last = 0;
    for (size_t k = 0; k < ids.size(); ++k) {
      size_t id = ids[k];
      first = std::min(first, pos_[id]);
      last = std::max(last, pos_[id]);
      alive_[id] = false;
      const Node &m = sub.program.graph.nodes[k];
      if (m.name) {
        if (isCallName(*m.name)) --nodeNames_[*m.name];
        noteFreed(*m.name);
      }
      for (const auto &o : m.outputs)
        forEachTensorName(o, [&](const std::string &name) {
          noteFreed(name);
          pendingErase_.insert(name);
        });
    }
    size_t callId = pool_.size() + calls_.size();
    calls_.push_back(makeDelegateCall(callName, delegateName, sub.userInputs, results, handle));
    alive_.push_back(true);
    member_.push_back(false);
    dependsOnCall_.push_back(false);
    pos_.push_back(SIZE_MAX);
    registerNode(callId);
    // The call reads what the members read from outside: their live producers.
    std::vector<size_t> producers;
    for (size_t id : ids)
      forEachProducer(id, [&](size_t p) {
        if (alive_[p] && p != callId) producers.push_back(p);
      });
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    for (size_t p : producers) addedUsers_[p].push_back(callId);
    addedProducers_.push_back(std::move(producers));
    addedUsers_.emplace_back();

    for (size_t k = 0; k < sub.outputs.size(); ++k) {
      const std::string &from = sub.outputs[k], &to = results[k];
      bool renamed = false;
      auto fix = [&](std::string &s) {
        if (s == from) {
          s = to;
          renamed = true;
        }
      };
      auto definer = definedByMember_.find(from);
      if (definer == definedByMember_.end()) throw InternalError("fuse: '" + from + "' is not defined by a member");
      forEachUser(definer->second, [&](size_t id) {
        if (!alive_[id] || id == callId) return;
        renamed = false;
        for (auto &in : mutableNode(id).inputs) edge::renameNamesIn(in.arg, fix);
        if (renamed) {
          addedProducers_[id].push_back(callId);
          addedUsers_[callId].push_back(id);
        }
      });
      if (auto it = outputUses_.find(from); it != outputUses_.end())
        for (size_t k2 : it->second) edge::renameNamesIn(g_.outputs[k2], fix);
      if (auto it = specUses_.find(from); it != specUses_.end())
        for (size_t k2 : it->second) edge::renameNamesIn(ep_.signature.outputSpecs[k2].arg, fix);
    }
    reorderWindow(first, last, callId);

    for (size_t k : owned) {
      inputErased_[k] = true;
      noteFreed(g_.inputs[k].name);
      pendingErase_.insert(g_.inputs[k].name);
    }
  }

  /// Writes the graph back: nodes in order, erased values and inputs gone.
  void finish() {
    placeInOrder();
    g_.nodes = std::move(pool_);
    flushErasures();
    size_t out = 0;
    for (size_t k = 0; k < g_.inputs.size(); ++k) {
      if (inputErased_[k]) continue;
      if (out != k) {
        g_.inputs[out] = std::move(g_.inputs[k]);
        ep_.signature.inputSpecs[out] = std::move(ep_.signature.inputSpecs[k]);
      }
      ++out;
    }
    g_.inputs.resize(out);
    ep_.signature.inputSpecs.resize(out);
  }

private:
  static constexpr const char *kCallName = "executorch_call_delegate";

  /// A node or value name leaves: if it is a call node's name, the search for
  /// the next one starts over.
  void noteFreed(const std::string &name) {
    if (isCallName(name)) callNameFloor_ = 0;
  }
  static bool isCallName(const std::string &name) { return name.rfind(kCallName, 0) == 0; }

  /// Counts node `id`'s name if it is call-like.
  void registerNode(size_t id) {
    const Node &node = this->node(id);
    if (node.name && isCallName(*node.name)) ++nodeNames_[*node.name];
  }

  /// The nodes that read a value of node `id` (some perhaps fused since).
  template <class F> void forEachUser(size_t id, F &&f) const {
    if (id < deps_.users.size())
      for (size_t u : deps_.users[id]) f(u);
    for (size_t u : addedUsers_[id]) f(u);
  }
  /// The nodes that define a value node `id` reads (some perhaps fused since).
  template <class F> void forEachProducer(size_t id, F &&f) const {
    if (id < deps_.producers.size())
      for (size_t p : deps_.producers[id]) f(p);
    for (size_t p : addedProducers_[id]) f(p);
  }

  /// The stable topological re-sort after a fusion, on the stretch
  /// [first, last] of order_ the partition spanned: the nodes that do not
  /// depend on the call keep their order, then the call, then those that do.
  /// Nothing outside the stretch moves: the graph was sorted before the step,
  /// so the partition's users outside it come after `last` already.
  void reorderWindow(size_t first, size_t last, size_t callId) {
    std::vector<size_t> before, after;
    for (size_t p = first; p <= last; ++p) {
      size_t id = order_[p];
      if (id == SIZE_MAX || !alive_[id]) continue;
      bool depends = false;
      forEachProducer(id, [&](size_t p) { depends = depends || (alive_[p] && (p == callId || dependsOnCall_[p])); });
      dependsOnCall_[id] = depends;
      (depends ? after : before).push_back(id);
    }
    size_t p = first;
    auto place = [&](size_t id) {
      order_[p] = id;
      pos_[id] = p++;
    };
    for (size_t id : before) place(id);
    place(callId);
    for (size_t id : after) {
      dependsOnCall_[id] = false;
      place(id);
    }
    while (p <= last) order_[p++] = SIZE_MAX;
  }

  Node &mutableNode(size_t id) { return id < pool_.size() ? pool_[id] : calls_[id - pool_.size()]; }

  /// Puts the live nodes of order_ at the front of pool_, in order, and drops
  /// the rest. In place: a second vector of every node means 20 MB of fresh,
  /// kernel-cleared pages at 100k nodes. Each live original node is carried
  /// along the chain of slots whose occupants must move on; the calls then
  /// fill their own slots.
  void placeInOrder() {
    size_t n = pool_.size();
    std::vector<size_t> dest(n, SIZE_MAX);
    std::vector<std::pair<size_t, size_t>> callDest; // (call index, slot)
    size_t live = 0;
    for (size_t id : order_) {
      if (id == SIZE_MAX) continue;
      if (id < n) dest[id] = live;
      else callDest.push_back({id - n, live});
      ++live;
    }
    if (live > n) pool_.resize(live); // not expected: every fusion removes at least the one node it calls
    std::vector<bool> taken(n, false); // slot's original node already carried off
    for (size_t start = 0; start < n; ++start) {
      if (dest[start] == SIZE_MAX || dest[start] == start || taken[start]) continue;
      Node carry = std::move(pool_[start]);
      taken[start] = true;
      size_t to = dest[start];
      while (to < n && dest[to] != SIZE_MAX && dest[to] != to && !taken[to]) {
        Node next = std::move(pool_[to]);
        taken[to] = true;
        pool_[to] = std::move(carry);
        carry = std::move(next);
        to = dest[to];
      }
      pool_[to] = std::move(carry);
    }
    for (auto [call, slot] : callDest) pool_[slot] = std::move(calls_[call]);
    pool_.resize(live);
    calls_.clear();
  }

  void flushErasures() {
    if (pendingErase_.empty()) return;
    g_.tensorValues.eraseKeys(pendingErase_);
    pendingErase_.clear();
  }

  ExportedProgram &ep_;
  Graph &g_;
  std::vector<Node> pool_;  // the original nodes, by id
  std::vector<Node> calls_; // call nodes, id pool_.size() + k
  std::vector<bool> alive_, member_, dependsOnCall_, inputErased_;
  std::vector<size_t> order_, pos_;
  const NodeDependencies &deps_; // edges between the original nodes
  std::vector<std::vector<size_t>> addedProducers_, addedUsers_; // by id: edges to and from calls
  edge::StringMap<size_t> definedByMember_;                            // tensor -> member of the current partition
  edge::StringMap<std::vector<size_t>> outputUses_;                    // value -> graph outputs naming it
  edge::StringMap<std::vector<size_t>> specUses_;                      // value -> output specs naming it
  std::unordered_set<std::string, edge::FastStringHash> outputTensors_; // tensors the graph returns
  edge::StringMap<int> nodeNames_;                                     // call-like node name -> live nodes so named
  std::unordered_set<std::string, edge::FastStringHash> pendingErase_; // tensorValues entries to drop
  int64_t nextHandle_ = 1;
  // Every executorch_call_delegate[_k] with k below this is taken (FX naming
  // restarts at k = 0 each time; calls are only added, so the search resumes).
  size_t callNameFloor_ = 0;
};

void lowerIncrementally(Program &program, const std::string &methodName, ExportedProgram &ep,
                        const PartitionResult &result, const NodeDependencies &deps, const LoweringOptions &options,
                        LoweringReport &report) {
  std::string where = "method " + methodName;
  std::unordered_map<std::string, std::vector<size_t>> ownedBy;
  for (size_t k = 0; k < result.inputTags.size(); ++k)
    if (!result.inputTags[k].empty()) ownedBy[result.inputTags[k]].push_back(k);
  auto partitions = nodesByTag(result);
  IncrementalFusion fusion(ep, deps, partitions.size());
  size_t nameCounter = 0;
  // An error leaves the method as the stepwise path would: the partitions
  // before the failing one fused, the rest untouched.
  try {
    for (auto &[tag, tagged] : partitions) {
      if (tagged.empty()) continue;
      DelegationSpec spec = effectiveSpec(*result.partitionTags.find(tag), options);
      const Backend &backend = options.backends->require(spec.preprocessorId());
      std::vector<size_t> ids = fusion.inGraphOrder(tagged);
      const std::vector<size_t> &owned = ownedBy[tag];

      std::vector<const Node *> members;
      for (size_t id : ids) members.push_back(&fusion.node(id));
      fusion.setMembers(ids, true);
      Subgraph sub = extractSubgraphWithoutNodes(ep, members, owned,
                                                 [&](const std::string &n) { return fusion.usedOutside(n); });
      fusion.setMembers(ids, false);
      // Delegates are only added, so the first free name never lies below the last one taken.
      while (program.delegates.contains("lowered_module_" + std::to_string(nameCounter))) ++nameCounter;
      std::string name = "lowered_module_" + std::to_string(nameCounter);
      fusion.moveInto(ids, sub);
      PreprocessResult pre;
      try {
        pre = runPreprocess(backend, sub.program, spec.compileSpecs, where + ", partition " + tag + " (" + name + ")",
                            report);
      } catch (...) {
        fusion.putBack(ids, sub);
        throw;
      }
      fusion.fuse(ids, owned, sub, name);

      Delegate d = makeDelegate(program, spec.backendId, spec.compileSpecs, std::move(pre.processedBytes),
                                std::move(sub.program));
      report.delegatesCreated.push_back(describeDelegate(name, methodName, d, ids.size()));
      program.delegates.set(name, std::move(d));
    }
  } catch (...) {
    fusion.finish();
    throw;
  }
  fusion.finish();
  ++report.incrementalMethods;
}

} // namespace

void partitionProgram(Program &program, const Partitioner &partitioner, const LoweringOptions &options,
                      LoweringReport &report) {
  checkSelectedMethodsExist(program, options);
  requireResolvedCalls(program);
  for (auto &[methodName, method] : program.methods) {
    if (!selected(options, methodName)) continue;
    ExportedProgram &ep = method.program;
    PartitionResult result = partitioner.partition(ep);
    if (result.nodeTags.size() != ep.graph.nodes.size() || result.inputTags.size() != ep.graph.inputs.size())
      throw InternalError("partitioner " + partitioner.name() + " returned tags that do not match the graph");
    checkTags(ep, result, "method " + methodName);
    // Tags without nodes are skipped, constants they claim included.
    if (std::all_of(result.nodeTags.begin(), result.nodeTags.end(), [](const std::string &t) { return t.empty(); }))
      continue;
    std::shared_ptr<const NodeDependencies> deps = options.stepwise ? nullptr : dependenciesOf(ep.graph, result);
    if (deps && incrementalApplies(ep.graph, result, *deps))
      lowerIncrementally(program, methodName, ep, result, *deps, options, report);
    else
      lowerStepwise(program, methodName, ep, result, options, report);
  }
  program.stage = Stage::Delegated;
}

} // namespace exir::partition
