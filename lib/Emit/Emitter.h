//===- Emit/Emitter.h - planned program -> pte::Program --------*- C++ -*-===//
//
// Builds the .pte model from a planned program as upstream's emitter does
// (pte-format.md §3): values in node order, KernelCall arguments = every schema
// argument (defaults included) + the return slot, operators deduplicated per
// plan, one chain per plan, methods sorted by name, one program-wide constant
// list deduplicated by bytes with index 0 reserved, constant bytes referenced
// (streamed by the writer), delegate blobs, and pytree container strings.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/FlatTensor.h"
#include "Pte/PteModel.h"
#include "IR/IR.h"

#include <functional>

namespace exir::emit {

/// Constants kept out of the .pte, as upstream's external_constants: each
/// matching placeholder becomes a Tensor with extra_tensor_info {FQN,
/// EXTERNAL} and its bytes an entry of the .ptd (ptd::File::namedData).
struct ExternalConstants {
  std::function<bool(const std::string &fqn)> matches;
  /// Filled by emitProgram: one entry per FQN, in first-use order.
  std::vector<ptd::NamedData> entries;

  void add(const std::string &fqn, const pte::BlobSource &bytes, const pte::Tensor &tensor);
};

struct EmitOptions {
  /// Fill Chain.stacktrace, one FrameList per instruction, from the nodes'
  /// stack_trace metadata (upstream's emit_stacktrace=True).
  bool emitStacktraces = false;
};

/// `external` (optional) selects constants for a .ptd and collects them.
pte::Program emitProgram(const Program &program, ExternalConstants *external = nullptr,
                         const EmitOptions &options = {});

/// The frames of a torch stack_trace string, as upstream's
/// _stacktrace_to_framelist reads them: every `File "F", line N, in NAME`
/// line, with the next line (stripped) as its context.
pte::FrameList framesOfStackTrace(const std::string &stackTrace);

/// Converts a torch treespec JSON string ([1, {...}]) into ExecuTorch's compact
/// pytree string (T2#1#1($,$), ...). Returns "" for an empty spec.
std::string compactPytreeSpec(const std::string &treespecJson);

} // namespace exir::emit
