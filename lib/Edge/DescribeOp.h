//===- Edge/DescribeOp.h - What the tools know about one operator -*- C++ -*-===//
//
// exir-edge --describe-op: the schema, whether the op is core ATen, its out
// variant, how to_edge decomposes it (rules in decompositions.yaml or a user's
// file, or a built-in C++ pass) and the dtype rows the active edge.yaml allows,
// as upstream's `op._schema` and `allowed_types` show them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Edge/DecompositionRules.h"

#include <string>
#include <vector>

namespace exir {
class EdgeDtypeRules;
}

namespace exir::edge {

/// The description of `name` ("aten::sigmoid", "aten::sigmoid.default",
/// "sigmoid", "mylib::custom_sin.out"). Throws exir::Error for a name the
/// operator table does not hold, with the closest names as a hint. The dtype
/// rows come from the first of `dtypeRules` that lists the op (a user's
/// --edge-yaml before the built-in file; the user's alone with
/// --edge-yaml-replace).
std::string describeOp(const std::string &name, const std::vector<const EdgeDtypeRules *> &dtypeRules,
                       const DecompositionRules &decompositions);

} // namespace exir::edge
