//===- tests/IR/GraphBuilder.h - Small in-memory programs for unit tests --===//
//
// Builds ExportedPrograms the way torch.export spells them (placeholders with
// signature specs, call nodes with NamedArguments, tensor_values metadata), so
// every pass can be tested from a graph of a few lines without files. Shared
// by the IR, Edge, Plan and Emit unit tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"
#include "Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace irtest {

using exir::Argument;
using exir::NamedArgument;

inline exir::TensorMeta meta(exir::ScalarType dtype, const std::vector<int64_t> &sizes) {
  exir::TensorMeta m;
  m.dtype = dtype;
  for (int64_t s : sizes) m.sizes.push_back(exir::SymInt::of(s));
  m.strides = exir::TensorMeta::contiguousStrides(m.sizes);
  m.storageOffset = exir::SymInt::of(0);
  return m;
}

/// A positional / keyword argument as torch.export records it.
inline NamedArgument pos(std::string name, Argument arg) {
  return NamedArgument{std::move(name), std::move(arg), exir::ArgumentPassing::Positional};
}
inline NamedArgument kw(std::string name, Argument arg) {
  return NamedArgument{std::move(name), std::move(arg), exir::ArgumentPassing::Keyword};
}
inline Argument T(std::string name) { return Argument::tensor(std::move(name)); }

class GraphBuilder {
public:
  using ST = exir::ScalarType;

  /// A placeholder with its input spec (user input by default).
  GraphBuilder &input(const std::string &name, ST dtype, const std::vector<int64_t> &sizes,
                      exir::InputKind kind = exir::InputKind::UserInput, const std::string &target = "") {
    ep.graph.inputs.push_back(T(name));
    ep.graph.tensorValues.set(name, meta(dtype, sizes));
    exir::InputSpec spec;
    spec.kind = kind;
    spec.arg = T(name);
    spec.target = target;
    ep.signature.inputSpecs.push_back(spec);
    return *this;
  }
  GraphBuilder &param(const std::string &name, const std::string &fqn, ST dtype, const std::vector<int64_t> &sizes) {
    return input(name, dtype, sizes, exir::InputKind::Parameter, fqn);
  }

  /// A call node `out = target(args)` with one tensor result.
  exir::Node &call(const std::string &target, std::vector<NamedArgument> args, const std::string &out, ST dtype,
                   const std::vector<int64_t> &sizes) {
    exir::Node n;
    n.target = target;
    n.inputs = std::move(args);
    n.outputs.push_back(T(out));
    ep.graph.tensorValues.set(out, meta(dtype, sizes));
    ep.graph.nodes.push_back(std::move(n));
    return ep.graph.nodes.back();
  }
  /// An ATen call: aten("add.Tensor") -> torch.ops.aten.add.Tensor.
  exir::Node &aten(const std::string &opAndOverload, std::vector<NamedArgument> args, const std::string &out,
                   ST dtype, const std::vector<int64_t> &sizes) {
    return call("torch.ops.aten." + opAndOverload, std::move(args), out, dtype, sizes);
  }
  /// sym = aten.sym_size.int(self, dim): a node defining the symbolic int
  /// `sym` (the caller sets its value in symIntValues where it needs one).
  exir::Node &symSize(const std::string &self, int64_t dim, const std::string &sym) {
    exir::Node n;
    n.target = "torch.ops.aten.sym_size.int";
    n.inputs = {pos("self", T(self)), pos("dim", exir::Argument::integer(dim))};
    exir::Argument out;
    out.kind = exir::ArgKind::SymInt;
    out.syms.push_back(exir::SymArg{true, sym, 0, 0});
    n.outputs.push_back(std::move(out));
    ep.graph.nodes.push_back(std::move(n));
    return ep.graph.nodes.back();
  }
  /// An edge call: edge("add.Tensor") -> executorch.exir.dialects.edge.ops.aten.add.Tensor.
  exir::Node &edge(const std::string &opAndOverload, std::vector<NamedArgument> args, const std::string &out,
                   ST dtype, const std::vector<int64_t> &sizes) {
    return call("executorch.exir.dialects.edge.ops.aten." + opAndOverload, std::move(args), out, dtype, sizes);
  }

  /// A user output.
  GraphBuilder &output(const std::string &name) {
    ep.graph.outputs.push_back(T(name));
    exir::OutputSpec spec;
    spec.arg = T(name);
    ep.signature.outputSpecs.push_back(spec);
    return *this;
  }

  exir::ExportedProgram ep;
};

/// Wraps one method into a program of the given stage.
inline exir::Program programOf(exir::ExportedProgram ep, exir::Stage stage = exir::Stage::Aten,
                               const std::string &method = "forward") {
  exir::Program p;
  p.stage = stage;
  p.methods.set(method, exir::Method{std::move(ep), std::nullopt});
  return p;
}

inline exir::ExportedProgram &methodOf(exir::Program &p, const std::string &method = "forward") {
  return p.methods.find(method)->program;
}
inline exir::Graph &graphOf(exir::Program &p, const std::string &method = "forward") {
  return methodOf(p, method).graph;
}

/// Sizes of a value as plain integers (static shapes only).
inline std::vector<int64_t> sizesOf(const exir::Graph &g, const std::string &name) {
  std::vector<int64_t> out;
  for (const auto &s : g.tensorValues.find(name)->sizes) out.push_back(s.value);
  return out;
}

/// The names of a node's inputs, in order.
inline std::vector<std::string> argNames(const exir::Node &n) {
  std::vector<std::string> out;
  for (const auto &in : n.inputs) out.push_back(in.name);
  return out;
}

/// A symbolic value argument (as_sym_int / as_sym_bool {as_name}).
inline Argument symName(exir::ArgKind kind, std::string name) {
  Argument a;
  a.kind = kind;
  a.syms.push_back(exir::SymArg{true, std::move(name), 0, 0});
  return a;
}

/// A branch of cond: `x -> op(x)` on a tensor of the given sizes (edge dialect).
inline std::shared_ptr<exir::Graph> unaryBranch(const std::string &op, const std::string &out,
                                                const std::vector<int64_t> &sizes) {
  auto g = std::make_shared<exir::Graph>();
  g->inputs.push_back(T("x"));
  g->tensorValues.set("x", meta(exir::ScalarType::Float, sizes));
  exir::Node n;
  n.target = "executorch.exir.dialects.edge.ops.aten." + op;
  n.inputs.push_back(pos("self", T("x")));
  n.outputs.push_back(T(out));
  g->tensorValues.set(out, meta(exir::ScalarType::Float, sizes));
  g->nodes.push_back(std::move(n));
  g->outputs.push_back(T(out));
  return g;
}

/// forward(x) = cond(x.sum() > 0, relu, sigmoid, (x,)) on f32[2, 4], edge dialect,
/// like ../shared/corpus/torch-export/cond.pt2 without the linear layer.
inline exir::ExportedProgram condMethod() {
  using exir::ScalarType;
  GraphBuilder b;
  b.input("x", ScalarType::Float, {2, 4});
  b.edge("sum.default", {pos("self", T("x"))}, "sum_1", ScalarType::Float, {});
  b.edge("gt.Scalar", {pos("self", T("sum_1")), pos("other", Argument::integer(0))}, "gt", ScalarType::Bool, {});
  exir::Node cond;
  cond.target = "torch.ops.higher_order.cond";
  Argument t, f;
  t.kind = f.kind = exir::ArgKind::Graph;
  t.mutableGraphName() = "true_graph_0";
  t.mutableGraph() = unaryBranch("relu.default", "relu", {2, 4});
  f.mutableGraphName() = "false_graph_0";
  f.mutableGraph() = unaryBranch("sigmoid.default", "sigmoid", {2, 4});
  cond.inputs = {pos("", T("gt")), pos("", t), pos("", f), pos("", Argument::tensors({"x"}))};
  cond.outputs.push_back(T("getitem"));
  b.ep.graph.tensorValues.set("getitem", meta(ScalarType::Float, {2, 4}));
  b.ep.graph.nodes.push_back(std::move(cond));
  b.output("getitem");
  return b.ep;
}

/// condMethod as the ATen program torch.export gives (condMethod is written in
/// the edge dialect): every edge target, branches included, back to ATen.
inline exir::Program atenCondProgram() {
  exir::Program p = programOf(condMethod(), exir::Stage::Aten);
  auto toAten = [](exir::Graph &g, const std::string &) {
    for (exir::Node &n : g.nodes) {
      exir::OpTarget t = exir::parseTarget(n.target);
      if (t.dialect == exir::TargetDialect::Edge) n.target = exir::atenTarget(t.ns, t.name, t.overload);
    }
  };
  toAten(graphOf(p), "");
  exir::forEachSubgraph(graphOf(p), toAten);
  return p;
}

/// Runs `fn` and returns the exir::Error's message it throws ("" if none is thrown).
/// A node calling `target` (a sym op, getitem, ...) with one output.
inline exir::Node symNode(const std::string &target, std::vector<NamedArgument> inputs, Argument out) {
  exir::Node n;
  n.target = target;
  n.inputs = std::move(inputs);
  n.outputs.push_back(std::move(out));
  return n;
}

/// An Edge method: split_with_sizes_copy(x[6, 4], [2, 4]) -> (getitem, getitem_1);
/// neg(getitem_1); returns getitem and neg (a list output, one element used twice).
inline exir::ExportedProgram splitWithSizesMethod() {
  GraphBuilder b;
  b.input("x", exir::ScalarType::Float, {6, 4});
  exir::Node split;
  split.target = exir::edgeTarget("aten", "split_with_sizes_copy", "default");
  split.inputs = {pos("self", T("x")), pos("split_sizes", Argument::ints_({2, 4}))};
  split.outputs.push_back(Argument::tensors({"getitem", "getitem_1"}));
  b.ep.graph.tensorValues.set("getitem", meta(exir::ScalarType::Float, {2, 4}));
  b.ep.graph.tensorValues.set("getitem_1", meta(exir::ScalarType::Float, {4, 4}));
  b.ep.graph.nodes.push_back(split);
  b.edge("neg.default", {pos("self", T("getitem_1"))}, "neg", exir::ScalarType::Float, {4, 4});
  b.output("getitem").output("neg");
  return b.ep;
}

template <typename F> std::string errorOf(F &&fn) {
  try {
    fn();
  } catch (const exir::Error &e) {
    return e.render();
  }
  return "";
}

} // namespace irtest
