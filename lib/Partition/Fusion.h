//===- Partition/Fusion.h - Grouping nodes into cycle-free partitions -*- C++ -*-===//
//
// The graph algorithms behind flow 3. A partition is fused into one
// executorch_call_delegate node, so its node set must be convex: no path may
// leave the partition and come back into it, or the fused graph would have a
// cycle (upstream's "Invalid partition, found dependency cycles").
//
// proposePartitions groups supported nodes the way torch's
// CapabilityBasedPartitioner does (nodes visited in reverse topological order,
// each supported node starts a partition, other partitions are merged into it
// when the quotient graph stays acyclic), in one of two modes:
//  - Upstream: every partition is a merge candidate at every step, so
//    unconnected partitions can fuse too ("horizontal fusion");
//  - Connected: only partitions joined by an edge merge, so each result is a
//    largest connected cycle-free group.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <optional>
#include <string>
#include <vector>

namespace exir::partition {

/// Producer/consumer edges between the nodes of a graph (by node index).
struct NodeDependencies {
  std::vector<std::vector<size_t>> users;     // node -> consuming nodes (ascending, unique)
  std::vector<std::vector<size_t>> producers; // node -> producing nodes (ascending, unique)
  std::vector<bool> feedsOutput;              // node defines a graph output
  bool definedOnce = true;                    // no value is defined by two outputs (else the first counts)
  static NodeDependencies of(const Graph &graph);
};

enum class FusionMode : uint8_t { Upstream, Connected };

struct FusionOptions {
  FusionMode mode = FusionMode::Upstream;
  size_t maxPartitionSize = 0; // 0 = unbounded
  size_t minPartitionSize = 1; // smaller partitions are dropped
};

/// One proposed partition: upstream's partition id (a creation counter, so
/// ids of partitions merged away are skipped) and its node indices, ascending.
struct ProposedPartition {
  size_t id = 0;
  std::vector<size_t> nodes;
};

/// Groups the supported nodes (supported[i] for graph.nodes[i]) into convex
/// partitions, in creation order (upstream's order, so "tag<id>" and
/// lowered_module_<k> numbering match upstream's).
std::vector<ProposedPartition> proposePartitions(const Graph &graph, const std::vector<bool> &supported,
                                                 const FusionOptions &options = {});
/// The same on the node dependencies alone (supported[i] for node i).
std::vector<ProposedPartition> proposePartitions(const NodeDependencies &deps, const std::vector<bool> &supported,
                                                 const FusionOptions &options = {});

/// If the node set is not convex, a witness: an outside node that depends on
/// the set and feeds it (its index); nullopt when the set is convex.
std::optional<size_t> findCycleWitness(const NodeDependencies &deps, const std::vector<size_t> &nodes);

/// Whether the node graph of `deps` stays acyclic when the nodes that share a
/// vertex (vertexOf[i] for node i) are contracted into one.
bool contractedGraphIsAcyclic(const NodeDependencies &deps, const std::vector<size_t> &vertexOf);

/// A stable topological order of graph.nodes: each node keeps its position
/// unless it uses a value defined later, in which case it moves after it.
/// Throws exir::Error if the graph has a cycle.
std::vector<size_t> stableTopologicalOrder(const Graph &graph);

} // namespace exir::partition
