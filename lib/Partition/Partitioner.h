//===- Partition/Partitioner.h - Partitioners tag what a backend takes -*- C++ -*-===//
//
// A partitioner looks at one method and tags the nodes a backend should run
// (upstream's Partitioner.partition, pte-format.md §7.2): every tag becomes one
// delegate, lowered with the DelegationSpec the partitioner gives for it.
// Graph inputs that are constants may be tagged too; the delegate then owns
// them and they leave the method's signature.
//
// Shipped partitioners (PartitionerRegistry::create, PartitionerRegistry.h,
// takes these spellings):
//   AddMulPartitionerDemo   upstream's demo: edge add.Tensor and mm.default,
//                           fused as torch's CapabilityBasedPartitioner does
//   FILE.yaml               a backend described by a spec file (SpecPartitioner.h)
//   nodes:A,B;C             explicit groups of node names, one tag per group
//                           (needs --backend); a group that is not convex is
//                           refused instead of silently split
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <memory>
#include <string>
#include <vector>

namespace exir::partition {

/// Which backend lowers a tag, with what compile specs.
struct DelegationSpec {
  std::string backendId;                 // written into the delegate, looked up by the runtime
  std::vector<CompileSpec> compileSpecs;
  std::string preprocessor;              // registry id whose preprocess runs; empty = backendId
  const std::string &preprocessorId() const { return preprocessor.empty() ? backendId : preprocessor; }
};

struct NodeDependencies;

/// A partitioner's decision for one method.
struct PartitionResult {
  std::vector<std::string> nodeTags;        // one per graph node; "" = not delegated
  std::vector<std::string> inputTags;       // one per graph input; a tag = the delegate owns that constant
  OrderedMap<DelegationSpec> partitionTags; // tag -> spec, in lowering order
  // The method's node dependencies when the partitioner built them: the
  // lowering's own checks reuse them instead of building them again (109M
  // instructions, 6.6% of the partition step on llama-100k). Optional.
  std::shared_ptr<const NodeDependencies> dependencies;
};

class Partitioner {
public:
  virtual ~Partitioner();
  virtual std::string name() const = 0;
  virtual PartitionResult partition(const ExportedProgram &method) const = 0;
};

/// Tags the constant graph inputs (parameters, buffers, lifted tensor
/// constants) whose users all carry one tag, so the delegate owns them.
/// Buffers the method mutates are left alone: the mutation must stay visible.
void tagOwnedConstants(const ExportedProgram &method, PartitionResult &result);

/// upstream's AddMulPartitionerDemo (op_partitioner_demo.py).
std::unique_ptr<Partitioner> makeAddMulPartitionerDemo();

/// Explicit node groups: "nodes:a,b;c" -> tag0 = {a, b}, tag1 = {c}.
std::unique_ptr<Partitioner> makeNodeListPartitioner(const std::string &groups, DelegationSpec spec);

} // namespace exir::partition
