//===- Partition/Fusion.cpp - Grouping nodes into cycle-free partitions ---===//
//
// The merge test works on the quotient graph (every existing partition
// contracted to one node): merging A and B is refused when a path leaves
// A ∪ B and comes back, possibly through other partitions, which will be
// contracted too. Since nodes are in topological order, a search only needs to
// look at nodes up to the last member of A ∪ B.
//
//===----------------------------------------------------------------------===//
#include "Partition/Fusion.h"
#include "Support/Error.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <cstdint>
#include <unordered_map>

namespace exir::partition {

namespace {

void sortUnique(std::vector<size_t> &v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

} // namespace

NodeDependencies NodeDependencies::of(const Graph &graph) {
  NodeDependencies deps;
  size_t n = graph.nodes.size();
  deps.users.assign(n, {});
  deps.producers.assign(n, {});
  deps.feedsOutput.assign(n, false);
  std::unordered_map<std::string, size_t> definedBy;
  for (size_t i = 0; i < n; ++i)
    for (const auto &o : graph.nodes[i].outputs) {
      std::vector<std::string> names;
      o.collectValueNames(names);
      for (const auto &name : names) definedBy.emplace(name, i);
    }
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> uses;
    for (const auto &in : graph.nodes[i].inputs) in.arg.collectValueNames(uses);
    for (const auto &u : uses) {
      auto it = definedBy.find(u);
      if (it == definedBy.end() || it->second == i) continue;
      deps.producers[i].push_back(it->second);
      deps.users[it->second].push_back(i);
    }
  }
  for (auto &v : deps.users) sortUnique(v);
  for (auto &v : deps.producers) sortUnique(v);
  for (const auto &o : graph.outputs) {
    std::vector<std::string> uses;
    o.collectValueNames(uses);
    for (const auto &u : uses)
      if (auto it = definedBy.find(u); it != definedBy.end()) deps.feedsOutput[it->second] = true;
  }
  return deps;
}

std::optional<size_t> findCycleWitness(const NodeDependencies &deps, const std::vector<size_t> &nodes) {
  if (nodes.empty()) return std::nullopt;
  size_t n = deps.users.size();
  std::vector<bool> member(n, false), tainted(n, false);
  size_t first = n, last = 0;
  for (size_t i : nodes) {
    member[i] = true;
    first = std::min(first, i);
    last = std::max(last, i);
  }
  // Forward sweep: an outside node is tainted when it depends on the set; a
  // member fed by a tainted node closes a cycle.
  for (size_t v = first; v <= last; ++v)
    for (size_t p : deps.producers[v]) {
      if (member[v] && tainted[p]) return p;
      if (!member[v] && (member[p] || tainted[p])) tainted[v] = true;
    }
  return std::nullopt;
}

namespace {

/// Partitions and the merge test. A merge of A and B is refused when the
/// quotient graph (every partition contracted to one vertex) has a path from A
/// to B, or from B to A, through another vertex. Rather than searching once
/// per pair, the partitions such paths reach from a partition C are marked once
/// (forward from C's successors, backward from its predecessors) and the marks
/// stay valid until C changes: a round tests every candidate against one
/// marking. A partition keeps the nodes just outside it (exits: users of its
/// members; entries: producers), so a search crosses it without walking its
/// members, and a merge moves the smaller partition's lists into the larger's.
class Partitioning {
public:
  Partitioning(const NodeDependencies &deps, const std::vector<bool> &supported, const FusionOptions &options)
      : deps_(deps), options_(options), slotOf_(deps.users.size(), -1), nodeSeen_(deps.users.size(), 0),
        feedsSupported_(deps.users.size(), false) {
    // Only a node that leads to a supported node can lead to a partition.
    for (size_t v = deps.users.size(); v-- > 0;)
      for (size_t u : deps.users[v])
        if (supported[u] || feedsSupported_[u]) {
          feedsSupported_[v] = true;
          break;
        }
  }

  int create(size_t node) {
    int id = int(slotOfId_.size());
    slots_.push_back(Slot{id, {node}, deps_.users[node], deps_.producers[node]});
    slotOfId_.push_back(int(slots_.size()) - 1);
    seen_.push_back(0);
    blocked_.push_back(0);
    byKey_.push_back(id); // the newest partition has the largest key
    slotOf_[node] = int(slots_.size()) - 1;
    lowestAssigned_ = std::min(lowestAssigned_, node);
    return id;
  }

  int partOf(size_t node) const { return slotOf_[node] < 0 ? -1 : slots_[size_t(slotOf_[node])].id; }
  bool isAssigned(size_t node) const { return slotOf_[node] >= 0; }
  size_t size(int id) const { return slot(id).members.size(); }

  /// Merges partition `other` into `self` unless that makes the quotient graph cyclic.
  bool tryMerge(int self, int other) {
    if (options_.maxPartitionSize && size(self) + size(other) > options_.maxPartitionSize) return false;
    if (markedFor_ != self) markBlockedBy(self);
    if (blocked_[size_t(other)] == epoch_) return false;
    int keep = slotOfId_[size_t(self)], gone = slotOfId_[size_t(other)];
    if (slots_[size_t(keep)].weight() < slots_[size_t(gone)].weight()) std::swap(keep, gone);
    Slot &into = slots_[size_t(keep)], &from = slots_[size_t(gone)];
    for (size_t v : from.members) slotOf_[v] = keep;
    for (auto [to, src] : {std::pair{&into.members, &from.members}, {&into.exits, &from.exits},
                           {&into.entries, &from.entries}}) {
      to->insert(to->end(), src->begin(), src->end());
      std::vector<size_t>().swap(*src);
    }
    into.id = self;
    slotOfId_[size_t(self)] = keep;
    slotOfId_[size_t(other)] = -1;
    // Upstream orders candidates by the first assignment of any of their
    // nodes: the earliest-created partition merged in.
    auto selfAt = std::find(byKey_.begin(), byKey_.end(), self);
    auto otherAt = std::find(byKey_.begin(), byKey_.end(), other);
    if (otherAt < selfAt) {
      *otherAt = self;
      byKey_.erase(selfAt);
    } else {
      byKey_.erase(otherAt);
    }
    markedFor_ = -1;
    return true;
  }

  /// Live partition ids in upstream's candidate order.
  const std::vector<int> &byAssignmentOrder() const { return byKey_; }

  /// Live partitions with an edge to or from `id`.
  std::vector<int> neighbours(int id) {
    std::vector<int> out;
    Slot &s = slot(id);
    for (auto *list : {&s.exits, &s.entries})
      for (size_t v : outside(*list, id))
        if (int q = partOf(v); q >= 0) out.push_back(q);
    return out;
  }

  std::vector<ProposedPartition> result() const {
    std::vector<ProposedPartition> out;
    for (size_t id = 0; id < slotOfId_.size(); ++id) {
      if (slotOfId_[id] < 0 || size(int(id)) < std::max<size_t>(1, options_.minPartitionSize)) continue;
      ProposedPartition p{id, slot(int(id)).members};
      std::sort(p.nodes.begin(), p.nodes.end());
      out.push_back(std::move(p));
    }
    return out;
  }

private:
  struct Slot {
    int id;
    std::vector<size_t> members, exits, entries; // exits/entries may hold members since merged (skipped, dropped when read)
    size_t weight() const { return members.size() + exits.size() + entries.size(); }
  };
  Slot &slot(int id) { return slots_[size_t(slotOfId_[size_t(id)])]; }
  const Slot &slot(int id) const { return slots_[size_t(slotOfId_[size_t(id)])]; }

  /// `list` without the nodes that now belong to partition `id` (dropped for good).
  const std::vector<size_t> &outside(std::vector<size_t> &list, int id) {
    int s = slotOfId_[size_t(id)];
    list.erase(std::remove_if(list.begin(), list.end(), [&](size_t v) { return slotOf_[v] == s; }), list.end());
    return list;
  }

  /// Marks (blocked_[p] == epoch_) every partition p that a path from `self`
  /// through another vertex reaches, or that reaches `self` that way.
  void markBlockedBy(int self) {
    epoch_ += 2; // epoch_ - 1 stamps what the forward search saw, epoch_ the backward one's
    markedFor_ = self;
    sweep(self, true, epoch_ - 1);
    sweep(self, false, epoch_);
  }

  /// One direction: the vertices next to `self` seed the search, and every
  /// partition found from a seed onwards is blocked. Unassigned nodes that
  /// cannot lead to a partition in this direction are not followed.
  void sweep(int self, bool forward, uint32_t seenStamp) {
    const auto &next = forward ? deps_.users : deps_.producers;
    stack_.clear();
    auto reach = [&](size_t v, bool seed) {
      int q = partOf(v);
      if (q == self) return;
      if (q >= 0) {
        if (!seed) blocked_[size_t(q)] = epoch_;
        if (seen_[size_t(q)] == seenStamp) return;
        seen_[size_t(q)] = seenStamp;
      } else {
        if ((forward ? !feedsSupported_[v] : v < lowestAssigned_) || nodeSeen_[v] == seenStamp) return;
        nodeSeen_[v] = seenStamp;
      }
      stack_.push_back(v);
    };
    Slot &own = slot(self);
    for (size_t v : outside(forward ? own.exits : own.entries, self)) reach(v, true);
    while (!stack_.empty()) {
      size_t v = stack_.back();
      stack_.pop_back();
      int q = partOf(v);
      if (q < 0) {
        for (size_t u : next[v]) reach(u, false);
      } else {
        Slot &s = slot(q);
        for (size_t u : outside(forward ? s.exits : s.entries, q)) reach(u, false);
      }
    }
  }

  const NodeDependencies &deps_;
  const FusionOptions &options_;
  std::vector<int> slotOf_;        // node -> slot (-1: unassigned)
  std::vector<Slot> slots_;        // partition storage; merged-away slots are empty
  std::vector<int> slotOfId_;      // partition id -> slot (-1: merged away)
  std::vector<int> byKey_;
  size_t lowestAssigned_ = SIZE_MAX; // nodes are assigned from the last one down
  // Search state, stamped with epoch_ instead of cleared.
  uint32_t epoch_ = 0;
  int markedFor_ = -1; // the partition blocked_ is valid for (-1: none)
  std::vector<uint32_t> nodeSeen_, seen_, blocked_;
  std::vector<size_t> stack_;
  std::vector<bool> feedsSupported_;
};

} // namespace

std::vector<ProposedPartition> proposePartitions(const Graph &graph, const std::vector<bool> &supported,
                                                 const FusionOptions &options) {
  if (supported.size() != graph.nodes.size())
    throw InternalError("proposePartitions: one 'supported' flag per node expected");
  return proposePartitions(NodeDependencies::of(graph), supported, options);
}

std::vector<ProposedPartition> proposePartitions(const NodeDependencies &deps, const std::vector<bool> &supported,
                                                 const FusionOptions &options) {
  if (supported.size() != deps.users.size())
    throw InternalError("proposePartitions: one 'supported' flag per node expected");
  Partitioning parts(deps, supported, options);
  // A round is a function of the partitions alone: after a round that merged
  // nothing, the next one merges nothing either until a partition is created.
  bool changed = false;
  for (size_t k = deps.users.size(); k-- > 0;) {
    std::optional<int> current;
    if (supported[k] && !parts.isAssigned(k)) {
      current = parts.create(k);
      changed = true;
    }
    if (options.mode == FusionMode::Upstream) {
      if (!changed) continue;
      changed = false;
      // The new partition (if any) first, then every partition in assignment
      // order; all are merged into the first candidate where possible.
      std::vector<int> candidates;
      if (current) candidates.push_back(*current);
      for (int p : parts.byAssignmentOrder())
        if (!current || p != *current) candidates.push_back(p);
      for (size_t c = 1; c < candidates.size(); ++c)
        if (parts.tryMerge(candidates[0], candidates[c])) changed = true;
    } else if (current) {
      // The partitions joined to the current one by an edge, in id order;
      // again from the first after a pass that merged, since a merged
      // partition's neighbours join them (upstream's loop over every id,
      // skipping those not adjacent).
      std::set<int> adjacent;
      for (int p : parts.neighbours(*current)) adjacent.insert(p);
      for (bool merged = true; merged;) {
        merged = false;
        for (auto it = adjacent.begin(); it != adjacent.end();) {
          int p = *it;
          if (!parts.tryMerge(*current, p)) {
            ++it;
            continue;
          }
          merged = true;
          adjacent.erase(it);
          for (int q : parts.neighbours(*current)) adjacent.insert(q);
          it = adjacent.upper_bound(p);
        }
      }
    }
  }
  return parts.result();
}

std::vector<size_t> stableTopologicalOrder(const Graph &graph) {
  NodeDependencies deps = NodeDependencies::of(graph);
  size_t n = graph.nodes.size();
  std::vector<size_t> pending(n);
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i) {
    pending[i] = deps.producers[i].size();
    if (!pending[i]) ready.push(i);
  }
  std::vector<size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t v = ready.top();
    ready.pop();
    order.push_back(v);
    for (size_t u : deps.users[v])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != n) throw Error("the graph has a dependency cycle after fusing partitions");
  return order;
}

} // namespace exir::partition
