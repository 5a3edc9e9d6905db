//===- Partition/Lowering.h - to_backend: the three delegation flows -*- C++ -*-===//
//
// The three flows of the delegation seed page (pte-format.md §7):
//  1. lowerWholeProgram: every method becomes one executorch_call_delegate of
//     a delegate that owns the whole method (upstream to_backend(id, ep, specs));
//  2. composeLoweredModule: a program whose graph already calls a lowered
//     module (torch serializes such calls as the string "<module>-<backend>")
//     gets that module's delegate from an artifact flow 1 wrote;
//  3. partitionProgram: a partitioner tags nodes; each tag becomes a delegate
//     called through executorch_call_delegate, its results named getitem,
//     getitem_1, ... as upstream's getitem nodes are.
// Every flow leaves the program in stage Delegated, with delegates named
// lowered_module_<i> (first free i) in the program-wide delegates table. A
// delegate keeps its original subgraph; constants it owns leave the method's
// signature (their table entries stay, the original subgraph refers to them).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"
#include "Partition/Backend.h"
#include "Partition/Partitioner.h"

#include <optional>
#include <string>
#include <vector>

namespace exir::partition {

struct LoweringOptions {
  const BackendRegistry *backends = &BackendRegistry::builtin();
  /// --backend: replaces the backend id a partitioner chose.
  std::optional<std::string> backendOverride;
  /// --compile-spec: replaces the compile specs a partitioner chose.
  std::optional<std::vector<CompileSpec>> compileSpecOverride;
  /// Methods to work on; empty = all.
  std::vector<std::string> methods;
  /// Flow 3 fuses partitions one pass over the method each (the reference the
  /// incremental path is tested against) instead of incrementally.
  bool stepwise = false;
};

/// What a flow did, for the tool to report.
struct LoweringReport {
  std::vector<std::string> warnings;
  std::vector<std::string> delegatesCreated; // "lowered_module_0 (forward): BackendWithCompilerDemo, 3 nodes, 61 bytes"
  size_t incrementalMethods = 0;             // flow 3: methods the incremental path lowered
};

/// Flow 1: lowers every selected method whole to `backendId`.
void lowerWholeProgram(Program &program, const std::string &backendId, const std::vector<CompileSpec> &compileSpecs,
                       const LoweringOptions &options, LoweringReport &report);

/// Flow 2: binds `moduleName` (as the graph's delegate calls name it) to the
/// delegate of `lowered` (an artifact written by flow 1: its only delegate,
/// or the one with key `moduleName`). Checks the backend id and that every
/// call's inputs and outputs match the lowered module's signature.
void composeLoweredModule(Program &program, const std::string &moduleName, const Program &lowered,
                          LoweringReport &report);

/// Flow 3: partitions every selected method with `partitioner` and lowers each tag.
void partitionProgram(Program &program, const Partitioner &partitioner, const LoweringOptions &options,
                      LoweringReport &report);

/// The checks every flow ends with: the program passes the edge verifier
/// (structure, namespaces, dtype rules), each delegate call names a delegate
/// and matches its original subgraph's user inputs and outputs (count, dtype,
/// shape), and each original subgraph passes the edge verifier itself.
void verifyDelegatedProgram(const Program &program);

/// Every executorch_call_delegate names a delegate of the program; otherwise
/// throws with the --lowered hint. exir-plan runs it too, so an unbound
/// lowered module is refused before emission.
void requireResolvedCalls(const Program &program);

/// Where delegate blobs go when the artifact is written to `outputPath`:
/// blobs up to `inlineLimit` bytes stay inline (base64 in the JSON); larger
/// ones move to the sidecar `<outputPath>.blobs`, each distinct blob (by
/// SHA-256) stored once. Writing to stdout ("-") keeps every blob inline.
/// Each blob moved to the sidecar gets its sha256 (recomputed).
void storeDelegateBlobs(Program &program, const std::string &outputPath, uint64_t inlineLimit);

/// Splits torch's "<module>-<backend>" delegate reference (the backend part is
/// empty when absent).
std::pair<std::string, std::string> splitDelegateReference(const std::string &reference);

} // namespace exir::partition
