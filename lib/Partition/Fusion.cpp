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

class Partitioning {
public:
  Partitioning(const NodeDependencies &deps, const FusionOptions &options)
      : deps_(deps), options_(options), partOf_(deps.users.size(), -1) {}

  int create(size_t node) {
    int id = int(members_.size());
    members_.push_back({node});
    alive_.push_back(true);
    assign(node, id);
    return id;
  }

  /// Merges partition `other` into `self` unless that makes the quotient graph cyclic.
  bool tryMerge(int self, int other) {
    if (options_.maxPartitionSize && members_[self].size() + members_[other].size() > options_.maxPartitionSize)
      return false;
    if (mergeCreatesCycle(self, other)) return false;
    for (size_t v : members_[other]) assign(v, self);
    members_[self].insert(members_[self].end(), members_[other].begin(), members_[other].end());
    members_[other].clear();
    alive_[other] = false;
    return true;
  }

  bool adjacent(int a, int b) const {
    for (size_t v : members_[a]) {
      for (size_t u : deps_.users[v])
        if (partOf_[u] == b) return true;
      for (size_t p : deps_.producers[v])
        if (partOf_[p] == b) return true;
    }
    return false;
  }

  /// Live partition ids in upstream's candidate order: by the first
  /// assignment of any of their nodes.
  std::vector<int> byAssignmentOrder() const {
    std::vector<int> out;
    std::vector<bool> seen(members_.size(), false);
    for (size_t v : assignOrder_) {
      int p = partOf_[v];
      if (p >= 0 && !seen[size_t(p)]) {
        seen[size_t(p)] = true;
        out.push_back(p);
      }
    }
    return out;
  }

  std::vector<ProposedPartition> result() const {
    std::vector<ProposedPartition> out;
    for (size_t id = 0; id < members_.size(); ++id) {
      if (!alive_[id] || members_[id].size() < std::max<size_t>(1, options_.minPartitionSize)) continue;
      ProposedPartition p{id, members_[id]};
      std::sort(p.nodes.begin(), p.nodes.end());
      out.push_back(std::move(p));
    }
    return out;
  }

  bool isAssigned(size_t node) const { return partOf_[node] >= 0; }
  size_t partitionCount() const { return members_.size(); }
  bool alive(int id) const { return alive_[size_t(id)]; }

private:
  void assign(size_t node, int id) {
    if (partOf_[node] < 0) assignOrder_.push_back(node);
    partOf_[node] = id;
  }

  bool mergeCreatesCycle(int a, int b) const {
    size_t last = 0;
    for (int p : {a, b})
      for (size_t v : members_[size_t(p)]) last = std::max(last, v);
    std::vector<bool> visitedNode(partOf_.size(), false), visitedPart(members_.size(), false);
    std::vector<size_t> stack;
    auto pushUsers = [&](size_t v) {
      for (size_t u : deps_.users[v])
        if (u <= last && !visitedNode[u]) stack.push_back(u);
    };
    for (int p : {a, b})
      for (size_t v : members_[size_t(p)])
        for (size_t u : deps_.users[v])
          if (partOf_[u] != a && partOf_[u] != b && u <= last) stack.push_back(u);
    while (!stack.empty()) {
      size_t v = stack.back();
      stack.pop_back();
      if (visitedNode[v]) continue;
      visitedNode[v] = true;
      int q = partOf_[v];
      if (q == a || q == b) return true;
      if (q >= 0) {
        // Another partition becomes one node: everything it outputs follows anything it takes.
        if (visitedPart[size_t(q)]) continue;
        visitedPart[size_t(q)] = true;
        for (size_t m : members_[size_t(q)]) {
          visitedNode[m] = true;
          pushUsers(m);
        }
      } else {
        pushUsers(v);
      }
    }
    return false;
  }

  const NodeDependencies &deps_;
  const FusionOptions &options_;
  std::vector<int> partOf_;
  std::vector<std::vector<size_t>> members_;
  std::vector<bool> alive_;
  std::vector<size_t> assignOrder_;
};

} // namespace

std::vector<ProposedPartition> proposePartitions(const Graph &graph, const std::vector<bool> &supported,
                                                 const FusionOptions &options) {
  if (supported.size() != graph.nodes.size())
    throw InternalError("proposePartitions: one 'supported' flag per node expected");
  NodeDependencies deps = NodeDependencies::of(graph);
  Partitioning parts(deps, options);
  for (size_t k = graph.nodes.size(); k-- > 0;) {
    std::optional<int> current;
    if (supported[k] && !parts.isAssigned(k)) current = parts.create(k);
    if (options.mode == FusionMode::Upstream) {
      // The new partition (if any) first, then every partition in assignment
      // order; all are merged into the first candidate where possible.
      std::vector<int> candidates;
      if (current) candidates.push_back(*current);
      for (int p : parts.byAssignmentOrder())
        if (!current || p != *current) candidates.push_back(p);
      for (size_t c = 1; c < candidates.size(); ++c) parts.tryMerge(candidates[0], candidates[c]);
    } else if (current) {
      for (bool changed = true; changed;) {
        changed = false;
        for (int p = 0; p < int(parts.partitionCount()); ++p)
          if (p != *current && parts.alive(p) && parts.adjacent(*current, p) && parts.tryMerge(*current, p))
            changed = true;
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
