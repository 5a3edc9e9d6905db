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
#include "IR/ValueNames.h"
#include "Support/Error.h"

#include <algorithm>
#include <limits>
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
  // Value id -> defining node (the first definition wins); the names are
  // views into the graph, which stays as it is here.
  ValueIndex values;
  values.reserve(graph.tensorValues.size() + 16);
  std::vector<size_t> definedBy;
  for (size_t i = 0; i < n; ++i)
    for (const auto &o : graph.nodes[i].outputs)
      forEachValueName(o, [&](const std::string &name) {
        if (values.intern(name) == definedBy.size())
          definedBy.push_back(i);
        else
          deps.definedOnce = false;
      });
  for (size_t i = 0; i < n; ++i)
    for (const auto &in : graph.nodes[i].inputs)
      forEachValueName(in.arg, [&](const std::string &name) {
        uint32_t id = values.find(name);
        if (id == ValueIndex::npos || definedBy[id] == i) return;
        deps.producers[i].push_back(definedBy[id]);
        deps.users[definedBy[id]].push_back(i);
      });
  for (auto &v : deps.users) sortUnique(v);
  for (auto &v : deps.producers) sortUnique(v);
  for (const auto &o : graph.outputs)
    forEachValueName(o, [&](const std::string &name) {
      if (uint32_t id = values.find(name); id != ValueIndex::npos) deps.feedsOutput[definedBy[id]] = true;
    });
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

/// Partitions and the merge test. A merge of A into C is refused when the
/// quotient graph (every partition contracted to one vertex) has a path from C
/// to A, or from A to C, through another vertex. The partitions the first kind
/// reaches from C are marked once, and the marks stay valid until C changes: a
/// round tests every candidate against one marking; the second kind is a
/// search from A, only when A starts before C ends. A partition keeps the nodes just outside it (exits: users of its
/// members; entries: producers), so a search crosses it without walking its
/// members, and a merge moves the smaller partition's lists into the larger's.
///
/// A forward search from a node early in a long graph would otherwise walk all
/// of the graph after it, once per round. Each marking therefore leaves its
/// partition a reach certificate: an index T such that every other live
/// partition whose first node is after T is reachable from it. Later rounds
/// that reach a certified partition mark all those partitions at once, and
/// stop at the first cut (an index no partition spans) at or after T: past it,
/// nothing leads back to a partition before it. A certificate stays true: a
/// merge only adds paths, and new partitions start before every assigned node.
class Partitioning {
public:
  Partitioning(const NodeDependencies &deps, const std::vector<bool> &supported, const FusionOptions &options)
      : deps_(deps), options_(options), slotOf_(deps.users.size(), -1), feedsSupported_(deps.users.size(), false),
        nodeSeen_(deps.users.size(), 0), spanDelta_(deps.users.size() + 1, 0), spanTree_(deps.users.size() + 2, 0) {
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
    fwdBlocked_.push_back(0);
    first_.push_back(node);
    last_.push_back(node);
    certificate_.push_back(kNone);
    keyOf_.push_back(id);
    version_.push_back(0);
    memo_.push_back({});
    byKey_.insert({size_t(id), id}); // the newest partition has the largest key
    touched_.push_back(id);
    scanned_.push_back({});
    openStamp_.push_back(0);
    byFirst_.insert({node, id});
    slotOf_[node] = int(slots_.size()) - 1;
    return id;
  }

  int partOf(size_t node) const { return slotOf_[node] < 0 ? -1 : slots_[size_t(slotOf_[node])].id; }
  bool isAssigned(size_t node) const { return slotOf_[node] >= 0; }
  size_t size(int id) const { return slot(id).members.size(); }

  /// Merges partition `other` into `self` unless that makes the quotient graph cyclic.
  bool tryMerge(int self, int other) {
    if (!fits(self, other)) return false;
    if (markedFor_ != self) markBlockedBy(self);
    if (blocked(self, other)) return false;
    merge(self, other);
    return true;
  }

  /// One round of upstream's loop: every other live partition, in assignment
  /// order, merged into `self` where possible. Only the candidates the marks
  /// leave open are looked at: after a marking from a new partition early in
  /// the graph, the few that start before the certificates' reach. True if
  /// anything merged.
  bool mergeRound(int self) {
    bool merged = false;
    size_t doneKey = 0; // candidates with keyOf_ < doneKey were tried
    for (;;) {
      if (markedFor_ != self) markBlockedBy(self);
      open_.clear();
      auto consider = [&](int q) {
        if (q != self && keyOf_[size_t(q)] >= doneKey && fwdBlocked_[size_t(q)] != epoch_ &&
            first_[size_t(q)] <= blockedAfter_ && !(memo_[size_t(q)] == Memo{self, version_[size_t(self)], version_[size_t(q)]}))
          open_.push_back(q);
      };
      auto inKeyOrder = [&] {
        std::sort(open_.begin(), open_.end(), [&](int a, int b) { return keyOf_[size_t(a)] < keyOf_[size_t(b)]; });
      };
      const Scan &scan = scanned_[size_t(self)];
      if (blockedAfter_ != kNone) {
        for (auto it = byFirst_.begin(); it != byFirst_.end() && it->first <= blockedAfter_; ++it) consider(it->second);
        inKeyOrder();
      } else if (doneKey == 0 && scan.version == version_[size_t(self)]) {
        // Only the partitions created or grown since: the rest were refused
        // at this version of `self` and stay refused (see Scan).
        ++openEpoch_;
        for (size_t i = scan.logPos; i < touched_.size(); ++i) {
          int q = touched_[i];
          if (slotOfId_[size_t(q)] < 0 || openStamp_[size_t(q)] == openEpoch_) continue;
          openStamp_[size_t(q)] = openEpoch_;
          consider(q);
        }
        inKeyOrder();
      } else {
        for (auto it = byKey_.lower_bound({doneKey, std::numeric_limits<int>::min()}); it != byKey_.end(); ++it)
          consider(it->second);
      }
      auto next = std::find_if(open_.begin(), open_.end(), [&](int q) { return fits(self, q) && !blocked(self, q); });
      if (next == open_.end()) {
        // Every candidate was refused at this version of `self` (with
        // doneKey > 0 those before it were tried at an earlier one).
        if (doneKey == 0) scanned_[size_t(self)] = Scan{version_[size_t(self)], touched_.size()};
        return merged;
      }
      doneKey = keyOf_[size_t(*next)] + 1;
      merge(self, *next);
      merged = true;
    }
  }

  bool fits(int self, int other) const {
    return !options_.maxPartitionSize || size(self) + size(other) <= options_.maxPartitionSize;
  }

  /// The merge test, with the marks made for `self`. A blocked pair stays
  /// blocked until one of the two grows (other merges only add paths), which
  /// the memo relies on.
  bool blocked(int self, int other) {
    if (fwdBlocked_[size_t(other)] == epoch_ || first_[size_t(other)] > blockedAfter_) return true;
    if (memo_[size_t(other)] == Memo{self, version_[size_t(self)], version_[size_t(other)]}) return true;
    // A path from `other` back to `self` needs a node of `other` before one of `self`.
    if (first_[size_t(other)] < last_[size_t(self)] &&
        (certifiedTwoSteps(other, self) || searchForward(other, self, nextCut(last_[size_t(self)])))) {
      memo_[size_t(other)] = Memo{self, version_[size_t(self)], version_[size_t(other)]};
      return true;
    }
    return false;
  }

  void merge(int self, int other) {
    byFirst_.erase({first_[size_t(self)], self});
    byFirst_.erase({first_[size_t(other)], other});
    ++version_[size_t(self)];
    // Upstream orders candidates by the first assignment of any of their
    // nodes: the earliest-created partition merged in.
    byKey_.erase({keyOf_[size_t(self)], self});
    byKey_.erase({keyOf_[size_t(other)], other});
    keyOf_[size_t(self)] = std::min(keyOf_[size_t(self)], keyOf_[size_t(other)]);
    byKey_.insert({keyOf_[size_t(self)], self});
    touched_.push_back(self);
    setSpan(self, -1);
    setSpan(other, -1);
    first_[size_t(self)] = std::min(first_[size_t(self)], first_[size_t(other)]);
    last_[size_t(self)] = std::max(last_[size_t(self)], last_[size_t(other)]);
    certificate_[size_t(self)] = std::min(certificate_[size_t(self)], certificate_[size_t(other)]);
    setSpan(self, +1);
    byFirst_.insert({first_[size_t(self)], self});
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
    markedFor_ = -1;
  }

  /// The first live partition in upstream's candidate order.
  int firstByAssignment() const { return byKey_.begin()->second; }

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

  static constexpr size_t kNone = SIZE_MAX;

  /// Partition `q` spans the cuts first..last-1: counted in (+1) or out (-1).
  void setSpan(int q, int sign) {
    size_t a = first_[size_t(q)], b = last_[size_t(q)];
    if (a == b) return;
    addSpan(a, sign);
    addSpan(b, -sign);
  }
  void addSpan(size_t at, int delta) {
    spanDelta_[at] += delta;
    for (size_t i = at + 1; i < spanTree_.size(); i += i & (~i + 1)) spanTree_[i] += delta;
  }
  /// The first index >= `at` that no partition spans (first <= cut < last).
  size_t nextCut(size_t at) const {
    long spanning = 0;
    for (size_t i = at + 1; i > 0; i -= i & (~i + 1)) spanning += spanTree_[i];
    while (spanning != 0) spanning += spanDelta_[++at];
    return at;
  }

  /// Marks (fwdBlocked_ == epoch_, or starting after blockedAfter_) every
  /// partition a path from `self` through another vertex reaches, then leaves
  /// `self` its reach certificate.
  void markBlockedBy(int self) {
    ++epoch_;
    markedFor_ = self;
    searchForward(self, -1, kNone);
    // The latest start among the other partitions the marks leave open, found
    // from the end of byFirst_: what it steps over was marked, so it costs no
    // more than the search did (a pass over every partition made this quadratic).
    size_t certificate = 0;
    for (auto it = byFirst_.upper_bound({blockedAfter_, std::numeric_limits<int>::max()}); it != byFirst_.begin();) {
      --it;
      if (it->second != self && fwdBlocked_[size_t(it->second)] != epoch_) {
        certificate = it->first;
        break;
      }
    }
    certificate_[size_t(self)] = std::min(certificate_[size_t(self)], certificate);
  }

  /// True when `from`'s certificate covers `target` and no edge joins them:
  /// then every path between them has two steps or more.
  bool certifiedTwoSteps(int from, int target) {
    if (certificate_[size_t(from)] == kNone ||
        first_[size_t(target)] <= std::max(certificate_[size_t(from)], last_[size_t(from)]))
      return false;
    for (size_t u : outside(slot(from).exits, from))
      if (partOf(u) == target) return false;
    return true;
  }

  /// The search behind both tests: from the vertices after `from` (the
  /// seeds), every partition found from a seed onwards is two or more steps
  /// from `from`. Nodes and partitions starting after `limit` are not
  /// followed. With target < 0 it marks those partitions for the merge test
  /// (markBlockedBy); otherwise it answers whether `target` is among them,
  /// and stops as soon as it is. Unassigned nodes that lead to no supported
  /// node are not followed either.
  bool searchForward(int from, int target, size_t limit) {
    uint32_t stamp = ++searchStamp_;
    size_t &after = target < 0 ? blockedAfter_ : probeAfter_;
    after = kNone;
    size_t stop = limit;
    bool found = false;
    stack_.clear();
    auto reach = [&](size_t v, bool seed) {
      int q = partOf(v);
      if (q == from) return;
      if (q >= 0) {
        if (!seed) {
          if (q == target) found = true;
          else if (target < 0) fwdBlocked_[size_t(q)] = epoch_;
        }
        if (seen_[size_t(q)] == stamp) return;
        seen_[size_t(q)] = stamp;
        if (q == target || first_[size_t(q)] > stop) return;
        if (certificate_[size_t(q)] != kNone) {
          // Taken no lower than q's last node, so that q is not among them.
          size_t a = std::max(certificate_[size_t(q)], last_[size_t(q)]);
          if (a < after) {
            after = a;
            stop = std::min(stop, nextCut(a));
            if (target >= 0 && first_[size_t(target)] > a) found = true;
          }
        }
      } else {
        if (nodeSeen_[v] == stamp) return;
        nodeSeen_[v] = stamp;
        if (!feedsSupported_[v] || v > stop) return;
      }
      stack_.push_back(v);
    };
    for (size_t v : outside(slot(from).exits, from)) reach(v, true);
    while (!found && !stack_.empty()) {
      size_t v = stack_.back();
      stack_.pop_back();
      int q = partOf(v);
      if (q < 0) {
        if (v > stop) continue;
        for (size_t u : deps_.users[v]) reach(u, false);
      } else {
        if (first_[size_t(q)] > stop) continue;
        for (size_t u : outside(slot(q).exits, q)) reach(u, false);
      }
    }
    return found;
  }

  const NodeDependencies &deps_;
  const FusionOptions &options_;
  std::vector<int> slotOf_;        // node -> slot (-1: unassigned)
  std::vector<bool> feedsSupported_; // node leads to a supported node
  std::vector<Slot> slots_;        // partition storage; merged-away slots are empty
  std::vector<int> slotOfId_;      // partition id -> slot (-1: merged away)
  std::set<std::pair<size_t, int>> byKey_; // live partitions by keyOf_: upstream's candidate order
  // Search state, stamped with epoch_ instead of cleared.
  uint32_t epoch_ = 0;
  int markedFor_ = -1; // the partition the marks are for (-1: none valid)
  uint32_t searchStamp_ = 0;
  struct Memo {
    int self = -1;
    uint32_t selfVersion = 0, version = 0;
    bool operator==(const Memo &o) const { return self == o.self && selfVersion == o.selfVersion && version == o.version; }
  };
  std::vector<size_t> keyOf_;       // per partition id: its earliest-created constituent (upstream's order)
  std::vector<uint32_t> version_;   // per partition id: bumped when it grows
  std::vector<Memo> memo_;          // per partition id: the last partition it was found blocked with
  std::set<std::pair<size_t, int>> byFirst_; // live partitions by first node
  std::vector<int> open_;
  // A refusal lasts while neither partition grows: merges elsewhere only add
  // paths, so a blocked pair stays blocked and a marked one stays marked, and
  // sizes are fixed. A round for `self` that merges nothing therefore leaves
  // Scan{its version, end of touched_}, and the next round at that version
  // looks only at the partitions touched_ lists after that point: without it,
  // rounds for the partition at the end of the graph, which reaches nothing,
  // walked every live partition (quadratic in partitions).
  struct Scan {
    uint32_t version = UINT32_MAX;
    size_t logPos = 0;
  };
  std::vector<int> touched_;          // partitions created or grown, in that order
  std::vector<Scan> scanned_;         // per partition id
  std::vector<uint32_t> openStamp_;   // per partition id: listed in open_ this epoch
  uint32_t openEpoch_ = 0;
  std::vector<uint32_t> nodeSeen_, seen_, fwdBlocked_;
  size_t blockedAfter_ = kNone, probeAfter_ = kNone; // what the certificates met by a search cover
  std::vector<size_t> first_, last_, certificate_;  // per partition id: node index range, certificate
  std::vector<int> spanDelta_;                      // partitions starting minus ending at each index
  std::vector<long> spanTree_;                      // Fenwick tree over spanDelta_
  std::vector<size_t> stack_;
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
      changed = parts.mergeRound(current ? *current : parts.firstByAssignment());
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

bool contractedGraphIsAcyclic(const NodeDependencies &deps, const std::vector<size_t> &vertexOf) {
  size_t n = deps.producers.size();
  if (vertexOf.size() != n) throw InternalError("contractedGraphIsAcyclic: one vertex per node expected");
  size_t vertices = n ? *std::max_element(vertexOf.begin(), vertexOf.end()) + 1 : 0;
  std::vector<std::vector<size_t>> succ(vertices);
  std::vector<size_t> indegree(vertices, 0);
  std::vector<bool> used(vertices, false);
  for (size_t i = 0; i < n; ++i) {
    used[vertexOf[i]] = true;
    for (size_t p : deps.producers[i])
      if (vertexOf[p] != vertexOf[i]) {
        succ[vertexOf[p]].push_back(vertexOf[i]);
        ++indegree[vertexOf[i]];
      }
  }
  std::vector<size_t> ready;
  size_t pending = 0;
  for (size_t v = 0; v < vertices; ++v) {
    if (!used[v]) continue;
    ++pending;
    if (!indegree[v]) ready.push_back(v);
  }
  while (!ready.empty()) {
    size_t v = ready.back();
    ready.pop_back();
    --pending;
    for (size_t w : succ[v])
      if (--indegree[w] == 0) ready.push_back(w);
  }
  return pending == 0;
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
