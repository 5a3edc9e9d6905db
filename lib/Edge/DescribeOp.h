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

#include <span>
#include <string>
#include <vector>

namespace exir {
class EdgeDtypeRules;
}

namespace exir::edge {

/// An op a built-in C++ pass of to_edge rewrites (the rest go through rules):
/// "aten::silu" by "decompose-activations" into "aten::sigmoid, aten::mul.Tensor".
struct CppDecomposition {
  const char *op, *pass, *result;
};
/// Every such op, as --describe-op lists them (kept in step with the passes'
/// triggers by a test).
std::span<const CppDecomposition> cppDecompositions();

/// The description of `name` ("aten::sigmoid", "aten::sigmoid.default",
/// "sigmoid", "mylib::custom_sin.out"). Throws exir::Error for a name the
/// operator table does not hold, with the closest names as a hint. The dtype
/// rows come from the first of `dtypeRules` that lists the op (a user's
/// --edge-yaml before the built-in file; the user's alone with
/// --edge-yaml-replace).
std::string describeOp(const std::string &name, const std::vector<const EdgeDtypeRules *> &dtypeRules,
                       const DecompositionRules &decompositions);

} // namespace exir::edge
