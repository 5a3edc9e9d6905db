//===- Serde/TorchPickle.h - The pickle subset of torch.save archives -*- C++ -*-===//
//
// A torch.save zip holds data.pkl (a protocol-2 pickle) and one member per
// storage (data/<key>). We only need to know, for each tensor, which storage it
// views and how (dtype, sizes, strides, offset), so weights can be referenced
// in place. The interpreter implements the opcodes and globals listed in
// torch-export-json.md §7.4 and refuses everything else: it never calls out to
// arbitrary code, which is what makes reading untrusted pickles safe here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exir {

/// One tensor found in a pickle.
struct PickledTensor {
  std::string storageKey;   // the storage's member: <root>/data/<storageKey>
  ScalarType dtype = ScalarType::Float;
  uint64_t storageBytes = 0; // as declared by the persistent id
  int64_t storageOffset = 0; // elements
  std::vector<int64_t> sizes, strides;
  bool fake = false;        // _reconstruct_fake_tensor: exported without data
};

/// Parses data.pkl and returns its tensors with their keys: for a dict (a state
/// dict or constants table) the dict keys; for tuples/lists the element paths
/// joined by '.' ("0.1"); a lone tensor gets the key "". `where` names the
/// pickle in errors, which carry the byte offset of the offending opcode.
std::vector<std::pair<std::string, PickledTensor>> readPickledTensors(std::string_view pickle,
                                                                      const std::string &where);

} // namespace exir
