//===- Partition/SpecPartitioner.h - A backend described by a YAML file -*- C++ -*-===//
//
// Lets a user describe what a backend supports without writing C++:
//
//   backend_id: MyNpu                 # the id written into the .pte (required)
//   preprocess: ExirSubgraphJson      # registered backend whose preprocess makes the blob
//                                     # (default: backend_id itself)
//   compile_specs: [max_value=4]      # KEY=VALUE, as --compile-spec
//   min_partition_size: 1             # smaller groups stay on the CPU (default 1)
//   max_partition_size: 8             # 0 or absent = unbounded
//   own_constants: true               # delegates own constants only they use (default true)
//   fusion: connected                 # connected (default) or upstream (CapabilityBasedPartitioner,
//                                     # which also fuses unconnected groups)
//   ops:                              # edge.yaml DSL: func / namespace / inherits /
//   - func: aten::add.Tensor          # type_alias / type_constraint, read by the same parser
//     namespace: edge
//     inherits: aten::add.Tensor
//     type_alias:
//       T0: [Float]
//     type_constraint:
//     - {self: T0, other: T0, __ret_0: T0}
//
// A node is supported when its op has an entry in `ops` and its dtypes match a
// row. Errors in `ops` (an unknown op, dtype or alias) name the spec file and
// the line, exactly as edge.yaml errors do.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Partition/Fusion.h"
#include "Partition/Partitioner.h"

#include <memory>
#include <string>

namespace exir::partition {

struct PartitionerSpec {
  DelegationSpec delegation;
  FusionOptions fusion{FusionMode::Connected, 0, 1};
  bool ownConstants = true;
};

/// Reads a spec file; `text` is its contents and `sourceName` names it in errors.
std::unique_ptr<Partitioner> parseSpecPartitioner(const std::string &text, const std::string &sourceName);
std::unique_ptr<Partitioner> loadSpecPartitioner(const std::string &path);

} // namespace exir::partition
