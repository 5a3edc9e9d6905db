//===- tests/Partition/FusionTest.cpp - Cycle-free fusion of supported nodes ===//
//
// The fusion algorithm on small graphs: a chain where naive fusion would
// create a cycle (Foo), a diamond, horizontal fusion in upstream mode only,
// size limits, the convexity witness, the stable topological order, and a
// property test over random DAGs: every proposed partition is convex and the
// graph with all partitions contracted is acyclic.
//
//===----------------------------------------------------------------------===//
#include "Partition/Fusion.h"
#include "Support/Error.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <random>
#include <set>

using namespace exir;
using namespace exir::partition;
using irtest::GraphBuilder;
using irtest::pos;
using irtest::T;
using ST = ScalarType;

namespace {

/// out = op(lhs, rhs) as an edge .Tensor op on f32[2].
void binary(GraphBuilder &b, const std::string &op, const std::string &out, const std::string &lhs,
            const std::string &rhs) {
  b.edge(op + ".Tensor", {pos("self", T(lhs)), pos("other", T(rhs))}, out, ST::Float, {2});
}

std::vector<bool> supportedOps(const Graph &g, const std::set<std::string> &ops) {
  std::vector<bool> out;
  for (const auto &n : g.nodes) out.push_back(ops.count(parseTarget(n.target).name) > 0);
  return out;
}

std::vector<std::vector<std::string>> names(const Graph &g, const std::vector<ProposedPartition> &parts) {
  std::vector<std::vector<std::string>> out;
  for (const auto &p : parts) {
    std::vector<std::string> group;
    for (size_t i : p.nodes) group.push_back(g.nodes[i].displayName());
    out.push_back(group);
  }
  return out;
}

/// True when contracting every partition leaves the node graph acyclic.
bool quotientIsAcyclic(const Graph &g, const std::vector<ProposedPartition> &parts) {
  size_t n = g.nodes.size();
  std::vector<size_t> group(n);
  for (size_t i = 0; i < n; ++i) group[i] = i;
  for (size_t k = 0; k < parts.size(); ++k)
    for (size_t i : parts[k].nodes) group[i] = n + k;
  return contractedGraphIsAcyclic(NodeDependencies::of(g), group);
}

/// Upstream's CapabilityBasedPartitioner, transcribed plainly (the check for
/// proposePartitions): nodes in reverse order, each supported node a new
/// partition, then every partition (in assignment order) merged into the first
/// candidate unless a path leaves the two and comes back, found by a search
/// from the users of the merged nodes that crosses other partitions whole.
std::vector<ProposedPartition> referencePartitions(const NodeDependencies &deps, const std::vector<bool> &supported,
                                                   const FusionOptions &options) {
  size_t n = deps.users.size();
  std::vector<int> partOf(n, -1);
  std::vector<std::set<size_t>> members;
  std::vector<size_t> assignOrder;
  auto createsCycle = [&](int a, int b) {
    std::set<size_t> merged = members[size_t(a)];
    merged.insert(members[size_t(b)].begin(), members[size_t(b)].end());
    std::set<size_t> visited;
    std::vector<size_t> stack;
    for (size_t v : merged)
      for (size_t u : deps.users[v])
        if (!merged.count(u)) stack.push_back(u);
    while (!stack.empty()) {
      size_t v = stack.back();
      stack.pop_back();
      if (!visited.insert(v).second) continue;
      if (merged.count(v)) return true;
      if (partOf[v] >= 0) {
        for (size_t m : members[size_t(partOf[v])])
          for (size_t u : deps.users[m])
            if (partOf[u] != partOf[v]) stack.push_back(u);
      } else {
        for (size_t u : deps.users[v]) stack.push_back(u);
      }
    }
    return false;
  };
  auto tryMerge = [&](int self, int other) {
    if (options.maxPartitionSize && members[size_t(self)].size() + members[size_t(other)].size() > options.maxPartitionSize)
      return false;
    if (createsCycle(self, other)) return false;
    for (size_t v : members[size_t(other)]) partOf[v] = self;
    members[size_t(self)].insert(members[size_t(other)].begin(), members[size_t(other)].end());
    members[size_t(other)].clear();
    return true;
  };
  auto adjacent = [&](int a, int b) {
    for (size_t v : members[size_t(a)]) {
      for (size_t u : deps.users[v])
        if (partOf[u] == b) return true;
      for (size_t p : deps.producers[v])
        if (partOf[p] == b) return true;
    }
    return false;
  };
  for (size_t k = n; k-- > 0;) {
    std::optional<int> current;
    if (supported[k]) {
      current = int(members.size());
      members.push_back({k});
      partOf[k] = *current;
      assignOrder.push_back(k);
    }
    if (options.mode == FusionMode::Upstream) {
      std::vector<int> candidates;
      if (current) candidates.push_back(*current);
      std::set<int> seen;
      for (size_t v : assignOrder)
        if (seen.insert(partOf[v]).second && (!current || partOf[v] != *current)) candidates.push_back(partOf[v]);
      for (size_t c = 1; c < candidates.size(); ++c) tryMerge(candidates[0], candidates[c]);
    } else if (current) {
      for (bool changed = true; changed;) {
        changed = false;
        for (int p = 0; p < int(members.size()); ++p)
          if (p != *current && !members[size_t(p)].empty() && adjacent(*current, p) && tryMerge(*current, p))
            changed = true;
      }
    }
  }
  std::vector<ProposedPartition> out;
  for (size_t id = 0; id < members.size(); ++id)
    if (!members[id].empty() && members[id].size() >= std::max<size_t>(1, options.minPartitionSize))
      out.push_back({id, std::vector<size_t>(members[id].begin(), members[id].end())});
  return out;
}

/// A random DAG of `n` nodes in topological order: each node uses 1-3 earlier
/// nodes, mostly recent ones (chains and diamonds), sometimes any (long edges).
NodeDependencies randomDag(std::mt19937 &rng, size_t n) {
  NodeDependencies deps;
  deps.users.assign(n, {});
  deps.producers.assign(n, {});
  deps.feedsOutput.assign(n, false);
  for (size_t v = 1; v < n; ++v) {
    size_t fanIn = 1 + rng() % 3;
    for (size_t j = 0; j < fanIn; ++j) {
      size_t back = rng() % 4 == 0 ? 1 + rng() % v : 1 + rng() % std::min<size_t>(v, 4);
      deps.producers[v].push_back(v - back);
    }
    std::sort(deps.producers[v].begin(), deps.producers[v].end());
    deps.producers[v].erase(std::unique(deps.producers[v].begin(), deps.producers[v].end()), deps.producers[v].end());
    for (size_t p : deps.producers[v]) deps.users[p].push_back(v);
  }
  deps.feedsOutput[n - 1] = true;
  return deps;
}

} // namespace

TEST_CASE("proposePartitions gives upstream's partitions on random DAGs, both modes", "[fusion]") {
  std::mt19937 rng(20261201);
  constexpr size_t kRounds = 4000;
  size_t compared = 0, merged = 0;
  for (size_t round = 0; round < kRounds; ++round) {
    size_t n = 2 + rng() % (round % 5 ? 30 : 200);
    NodeDependencies deps = randomDag(rng, n);
    std::vector<bool> supported(n);
    unsigned density = 1 + rng() % 4; // a quarter to all of the nodes supported
    for (size_t v = 0; v < n; ++v) supported[v] = rng() % 4 < density;
    for (FusionMode mode : {FusionMode::Upstream, FusionMode::Connected}) {
      FusionOptions options{mode, round % 5 == 0 ? size_t(2 + rng() % 4) : 0, round % 7 == 0 ? size_t(2) : 1};
      auto expected = referencePartitions(deps, supported, options);
      auto got = proposePartitions(deps, supported, options);
      INFO("round " << round << ", " << n << " nodes, mode " << int(mode));
      REQUIRE(got.size() == expected.size());
      for (size_t k = 0; k < got.size(); ++k) {
        CHECK(got[k].id == expected[k].id);
        CHECK(got[k].nodes == expected[k].nodes);
        merged += got[k].nodes.size() > 1;
      }
      ++compared;
    }
  }
  CHECK(compared == 2 * kRounds);
  CHECK(merged > 1000); // the graphs do exercise merging
}

TEST_CASE("Foo: the sub between two mm+add pairs splits them, with upstream's ids", "[fusion]") {
  GraphBuilder b;
  b.input("a", ST::Float, {2, 2}).input("x", ST::Float, {2, 2}).input("b", ST::Float, {2, 2});
  b.edge("mm.default", {pos("self", T("a")), pos("mat2", T("x"))}, "mm", ST::Float, {2, 2});
  b.edge("add.Tensor", {pos("self", T("mm")), pos("other", T("b"))}, "add", ST::Float, {2, 2});
  b.edge("sub.Tensor", {pos("self", T("add")), pos("other", T("a"))}, "sub", ST::Float, {2, 2});
  b.edge("mm.default", {pos("self", T("sub")), pos("mat2", T("x"))}, "mm_1", ST::Float, {2, 2});
  b.edge("add.Tensor", {pos("self", T("mm_1")), pos("other", T("b"))}, "add_1", ST::Float, {2, 2});
  b.output("add_1");
  const Graph &g = b.ep.graph;
  auto supported = supportedOps(g, {"mm", "add"});
  for (FusionMode mode : {FusionMode::Upstream, FusionMode::Connected}) {
    auto parts = proposePartitions(g, supported, {mode, 0, 1});
    // Visited in reverse: add_1 -> 0, mm_1 -> 1 (absorbs 0), add -> 2, mm -> 3 (absorbs 2).
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].id == 1);
    CHECK(parts[1].id == 3);
    CHECK(names(g, parts) == std::vector<std::vector<std::string>>{{"mm_1", "add_1"}, {"mm", "add"}});
  }
  // Naive fusion of all four supported nodes is not convex; the sub is the witness.
  NodeDependencies deps = NodeDependencies::of(g);
  auto witness = findCycleWitness(deps, {0, 1, 3, 4});
  REQUIRE(witness);
  CHECK(g.nodes[*witness].displayName() == "sub");
  CHECK_FALSE(findCycleWitness(deps, {0, 1}));
  CHECK_FALSE(findCycleWitness(deps, {3, 4}));
  CHECK_FALSE(findCycleWitness(deps, {0, 1, 2, 3, 4}));
}

TEST_CASE("a diamond around an unsupported node is split, never fused into a cycle", "[fusion]") {
  // a = x + y; b = a * y (unsupported); c = a + y; d = b + c.
  GraphBuilder b;
  b.input("x", ST::Float, {2}).input("y", ST::Float, {2});
  binary(b, "add", "a", "x", "y");
  binary(b, "mul", "b", "a", "y");
  binary(b, "add", "c", "a", "y");
  binary(b, "add", "d", "b", "c");
  b.output("d");
  const Graph &g = b.ep.graph;
  auto supported = supportedOps(g, {"add"});
  NodeDependencies deps = NodeDependencies::of(g);
  REQUIRE(findCycleWitness(deps, {0, 2, 3}) == std::optional<size_t>(1));
  for (FusionMode mode : {FusionMode::Upstream, FusionMode::Connected}) {
    auto parts = proposePartitions(g, supported, {mode, 0, 1});
    CHECK(names(g, parts) == std::vector<std::vector<std::string>>{{"c", "d"}, {"a"}});
    for (const auto &p : parts) CHECK_FALSE(findCycleWitness(deps, p.nodes));
    CHECK(quotientIsAcyclic(g, parts));
  }
  // With the mul supported too, everything is one partition.
  auto all = proposePartitions(g, supportedOps(g, {"add", "mul"}), {FusionMode::Connected, 0, 1});
  CHECK(names(g, all) == std::vector<std::vector<std::string>>{{"a", "b", "c", "d"}});
}

TEST_CASE("a path through another partition also counts as a cycle", "[fusion]") {
  // p = x + y; q = relu(p) (own partition); r = p + q: {p, r} would loop through {q}.
  GraphBuilder b;
  b.input("x", ST::Float, {2}).input("y", ST::Float, {2});
  binary(b, "add", "p", "x", "y");
  b.edge("relu.default", {pos("self", T("p"))}, "q", ST::Float, {2});
  binary(b, "add", "r", "p", "q");
  b.output("r");
  const Graph &g = b.ep.graph;
  // Everything supported: one partition. Adds and relu in separate runs cannot
  // be tested through the public API without a second backend, so check the
  // quotient property on the merged result and on forced splits.
  auto parts = proposePartitions(g, {true, true, true}, {FusionMode::Upstream, 0, 1});
  CHECK(names(g, parts) == std::vector<std::vector<std::string>>{{"p", "q", "r"}});
  CHECK_FALSE(quotientIsAcyclic(g, {ProposedPartition{0, {0, 2}}, ProposedPartition{1, {1}}}));
  CHECK(quotientIsAcyclic(g, {ProposedPartition{0, {1, 2}}, ProposedPartition{1, {0}}}));
}

TEST_CASE("upstream mode fuses unconnected partitions, connected mode does not", "[fusion]") {
  GraphBuilder b;
  b.input("x", ST::Float, {2}).input("y", ST::Float, {2});
  binary(b, "add", "p", "x", "x");
  binary(b, "add", "q", "y", "y");
  binary(b, "mul", "r", "p", "q");
  b.output("r");
  const Graph &g = b.ep.graph;
  auto supported = supportedOps(g, {"add"});
  CHECK(names(g, proposePartitions(g, supported, {FusionMode::Upstream, 0, 1})) ==
        std::vector<std::vector<std::string>>{{"p", "q"}});
  CHECK(names(g, proposePartitions(g, supported, {FusionMode::Connected, 0, 1})) ==
        std::vector<std::vector<std::string>>{{"q"}, {"p"}});
}

TEST_CASE("partition size limits", "[fusion]") {
  GraphBuilder b;
  b.input("x", ST::Float, {2});
  binary(b, "add", "a", "x", "x");
  binary(b, "add", "b", "a", "x");
  binary(b, "add", "c", "b", "x");
  binary(b, "mul", "d", "c", "x");
  binary(b, "add", "e", "d", "x");
  b.output("e");
  const Graph &g = b.ep.graph;
  auto supported = supportedOps(g, {"add"});
  CHECK(names(g, proposePartitions(g, supported, {FusionMode::Connected, 0, 1})) ==
        std::vector<std::vector<std::string>>{{"e"}, {"a", "b", "c"}});
  CHECK(names(g, proposePartitions(g, supported, {FusionMode::Connected, 2, 1})) ==
        std::vector<std::vector<std::string>>{{"e"}, {"b", "c"}, {"a"}});
  CHECK(names(g, proposePartitions(g, supported, {FusionMode::Connected, 0, 2})) ==
        std::vector<std::vector<std::string>>{{"a", "b", "c"}});
  CHECK(proposePartitions(g, supported, {FusionMode::Connected, 0, 4}).empty());
}

TEST_CASE("stable topological order moves only what must move", "[fusion]") {
  GraphBuilder b;
  b.input("x", ST::Float, {2});
  binary(b, "add", "a", "x", "x");
  binary(b, "mul", "u", "f", "x"); // uses f, defined later
  binary(b, "add", "v", "a", "x");
  binary(b, "add", "f", "a", "a");
  b.output("u");
  CHECK(stableTopologicalOrder(b.ep.graph) == std::vector<size_t>{0, 2, 3, 1});
  binary(b, "add", "w", "z", "x");
  binary(b, "add", "z", "w", "x");
  CHECK_THROWS_AS(stableTopologicalOrder(b.ep.graph), Error);
}

TEST_CASE("random DAGs: partitions are convex and their quotient is acyclic", "[fusion]") {
  std::mt19937 rng(20240601);
  for (int round = 0; round < 300; ++round) {
    GraphBuilder b;
    b.input("in", ST::Float, {2});
    size_t n = 2 + rng() % 14;
    std::vector<std::string> values{"in"};
    std::vector<bool> supported;
    for (size_t i = 0; i < n; ++i) {
      std::string out = "v" + std::to_string(i);
      const std::string &lhs = values[rng() % values.size()];
      const std::string &rhs = values[rng() % values.size()];
      binary(b, "add", out, lhs, rhs);
      values.push_back(out);
      supported.push_back(rng() % 3 != 0);
    }
    b.output(values.back());
    const Graph &g = b.ep.graph;
    NodeDependencies deps = NodeDependencies::of(g);
    for (FusionMode mode : {FusionMode::Upstream, FusionMode::Connected}) {
      size_t maxSize = round % 4 == 0 ? 3 : 0;
      auto parts = proposePartitions(g, supported, {mode, maxSize, 1});
      std::vector<int> owner(n, -1);
      size_t covered = 0;
      for (size_t k = 0; k < parts.size(); ++k) {
        INFO("round " << round);
        CHECK_FALSE(findCycleWitness(deps, parts[k].nodes));
        if (maxSize) CHECK(parts[k].nodes.size() <= maxSize);
        for (size_t i : parts[k].nodes) {
          CHECK(supported[i]);
          CHECK(owner[i] == -1);
          owner[i] = int(k);
          ++covered;
        }
      }
      CHECK(covered == size_t(std::count(supported.begin(), supported.end(), true)));
      CHECK(quotientIsAcyclic(g, parts));
    }
  }
}
