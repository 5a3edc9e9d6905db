//===- Partition/LoweringDetail.h - Pieces the delegation flows share -*- C++ -*-===//
//
// Lowering.cpp holds flows 1 and 2 and these helpers; PartitionFlow.cpp holds
// flow 3. Not part of the library's interface.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"
#include "Partition/Backend.h"

#include <functional>
#include <string>
#include <vector>

namespace exir::partition {
struct LoweringOptions;
struct LoweringReport;
} // namespace exir::partition

namespace exir::partition::detail {

bool isDelegateCall(const Node &node);
/// The method is one `options` selects (all when none are named).
bool selected(const LoweringOptions &options, const std::string &method);
void checkSelectedMethodsExist(const Program &program, const LoweringOptions &options);
/// lowered_module_<i>, the first i the program's delegates do not use.
std::string nextDelegateName(const Program &program);
/// The largest numeric debug_handle of the graph's nodes (0 when none).
int64_t maxDebugHandle(const Graph &graph);

/// Copies the metadata tables of `name` from `from` into `to`.
void copyValueMeta(const Graph &from, Graph &to, const std::string &name);

/// The fused partition as a standalone program, and how the parent calls it.
struct Subgraph {
  ExportedProgram program;
  std::vector<std::string> userInputs; // parent values passed to the call, in order
  std::vector<std::string> outputs;    // parent values the call produces, in order
};

/// The partition `nodes` (in graph order) of `parent` as a program: its inputs
/// are the owned graph inputs (indices into parent's inputs), then the outside
/// values the nodes read in order of first use; its outputs the tensors the
/// nodes define that `usedOutside` accepts, in node order.
Subgraph extractSubgraph(const ExportedProgram &parent, const std::vector<const Node *> &nodes,
                         const std::vector<size_t> &ownedInputs,
                         const std::function<bool(const std::string &)> &usedOutside);
/// The same with the subgraph's node list left empty (room reserved): the
/// caller appends the nodes, in the same order, and may move them there when
/// they leave the parent anyway.
Subgraph extractSubgraphWithoutNodes(const ExportedProgram &parent, const std::vector<const Node *> &nodes,
                                     const std::vector<size_t> &ownedInputs,
                                     const std::function<bool(const std::string &)> &usedOutside);

/// FX's name for a new node: `base`, base_1, ... unused by nodes and values.
std::string freshNodeName(const Graph &graph, const std::string &base);

/// The executorch_call_delegate node named `nodeName`: (module name, *inputs) -> outputs.
Node makeDelegateCall(std::string nodeName, const std::string &delegateName, const std::vector<std::string> &inputs,
                      const std::vector<std::string> &outputs, int64_t debugHandle);

/// A delegate of `backendId` holding the preprocessed blob, the original
/// subgraph, and the bytes of the constants that subgraph owns.
Delegate makeDelegate(const Program &program, const std::string &backendId, const std::vector<CompileSpec> &specs,
                      std::string blob, ExportedProgram original);

/// "lowered_module_0 (forward): BackendWithCompilerDemo, 3 nodes, 61 bytes"
std::string describeDelegate(const std::string &name, const std::string &method, const Delegate &d,
                             size_t nodeCount);

/// Runs a backend's preprocess, attributing its errors to `where`.
PreprocessResult runPreprocess(const Backend &backend, const ExportedProgram &sub, const std::vector<CompileSpec> &specs,
                               const std::string &where, LoweringReport &report);

} // namespace exir::partition::detail
