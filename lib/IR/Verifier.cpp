//===- IR/Verifier.cpp - Stage invariants ---------------------------------===//
//
// Structural rules for every stage, then what each stage promises. Locations use
// the JSON pointer of the stage artifact (/methods/<m>/graph_module/graph/nodes/<i>)
// plus the node's value name, so a message can be found in the file.
//
//===----------------------------------------------------------------------===//
#include "IR/Verifier.h"
#include "Support/Error.h"

#include <unordered_set>

namespace exir {

namespace {

std::string nodeLocation(const std::string &method, size_t index, const Node &node) {
  std::string loc = "/methods/" + method + "/graph_module/graph/nodes/" + std::to_string(index);
  std::string name = node.displayName();
  if (!name.empty()) loc += " (" + name + ")";
  return loc;
}

/// Names an argument defines when it appears in a node's outputs / graph inputs.
void collectDefinedNames(const Argument &arg, std::vector<std::string> &out) {
  arg.collectValueNames(out);
  if (arg.kind == ArgKind::CustomObj) out.push_back(arg.name);
}

void verifyGraph(const Graph &graph, const std::string &method, bool requireMeta) {
  // Locations are built only on failure: formatting one per node on every
  // verification was a tenth of exir-edge's time on large graphs.
  std::unordered_set<std::string> defined;
  defined.reserve(graph.tensorValues.size() + graph.inputs.size());
  auto define = [&](const std::string &name, const auto &where) {
    if (name.empty()) return;
    if (!defined.insert(name).second)
      throw Error("value '" + name + "' is defined twice", {}, where());
    if (requireMeta && !graph.tensorValues.contains(name) && !graph.symIntValues.contains(name) &&
        !graph.symBoolValues.contains(name) && !graph.symFloatValues.contains(name) &&
        !graph.customObjValues.contains(name))
      throw Error("value '" + name + "' has no entry in tensor_values/sym_*_values", {}, where());
  };
  std::vector<std::string> names;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    names.clear();
    collectDefinedNames(graph.inputs[i], names);
    for (const auto &n : names)
      define(n, [&] { return "/methods/" + method + "/graph_module/graph/inputs/" + std::to_string(i); });
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node &node = graph.nodes[i];
    auto where = [&] { return nodeLocation(method, i, node); };
    if (node.target.empty()) throw Error("node has an empty target", {}, where());
    for (size_t a = 0; a < node.inputs.size(); ++a) {
      names.clear();
      node.inputs[a].arg.collectValueNames(names);
      for (const auto &u : names)
        if (!defined.count(u))
          throw Error("uses '" + u + "' before it is defined (argument '" + node.inputs[a].name +
                          "'; graph not in topological order or value missing)",
                      {}, where() + "/inputs/" + std::to_string(a));
    }
    for (const auto &out : node.outputs) {
      names.clear();
      collectDefinedNames(out, names);
      for (const auto &n : names) define(n, where);
    }
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    std::vector<std::string> uses;
    graph.outputs[i].collectValueNames(uses);
    for (const auto &u : uses)
      if (!defined.count(u))
        throw Error("graph output '" + u + "' is not defined", {},
                    "/methods/" + method + "/graph_module/graph/outputs/" + std::to_string(i));
  }
}

/// The name a signature spec refers to, for matching against graph inputs/outputs.
std::string specArgName(const Argument &arg) {
  switch (arg.kind) {
  case ArgKind::Tensor: case ArgKind::CustomObj: case ArgKind::OptionalTensor: return arg.name;
  case ArgKind::SymInt: case ArgKind::SymBool: case ArgKind::SymFloat:
    return arg.syms.empty() ? "" : (arg.syms[0].isName ? arg.syms[0].name : "");
  default: return "";
  }
}

} // namespace

void verifyMethodStructure(const ExportedProgram &ep, const std::string &method) {
  const Graph &graph = ep.graph;
  verifyGraph(graph, method, /*requireMeta=*/true);
  const auto &ins = ep.signature.inputSpecs;
  const auto &outs = ep.signature.outputSpecs;
  if (ins.size() != graph.inputs.size())
    throw Error("graph signature has " + std::to_string(ins.size()) + " input specs but the graph has " +
                    std::to_string(graph.inputs.size()) + " inputs",
                {}, "/methods/" + method + "/graph_module/signature/input_specs");
  for (size_t i = 0; i < ins.size(); ++i) {
    std::string a = specArgName(ins[i].arg), b = specArgName(graph.inputs[i]);
    if (a != b)
      throw Error("input spec names '" + a + "' but graph input " + std::to_string(i) + " is '" + b + "'", {},
                  "/methods/" + method + "/graph_module/signature/input_specs/" + std::to_string(i));
  }
  if (outs.size() != graph.outputs.size())
    throw Error("graph signature has " + std::to_string(outs.size()) + " output specs but the graph has " +
                    std::to_string(graph.outputs.size()) + " outputs",
                {}, "/methods/" + method + "/graph_module/signature/output_specs");
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string a = specArgName(outs[i].arg), b = specArgName(graph.outputs[i]);
    if (a != b)
      throw Error("output spec names '" + a + "' but graph output " + std::to_string(i) + " is '" + b + "'", {},
                  "/methods/" + method + "/graph_module/signature/output_specs/" + std::to_string(i));
  }
}

void verifyProgram(const Program &program, Stage stage) {
  if (program.stage != stage)
    throw Error(std::string("expected a program of stage '") + stageName(stage) + "', got '" +
                stageName(program.stage) + "'");
  if (program.methods.empty()) throw Error("program has no methods", {}, "/methods");
  for (const auto &[name, method] : program.methods) {
    verifyMethodStructure(method.program, name);
    const Graph &graph = method.program.graph;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const Node &node = graph.nodes[i];
      OpTarget t = parseTarget(node.target);
      std::string where = nodeLocation(name, i, node);
      switch (stage) {
      case Stage::Aten:
        if (t.dialect == TargetDialect::Edge || t.dialect == TargetDialect::MemoryAlloc)
          throw Error("edge/executorch op '" + node.target + "' in an ATen-dialect program", {}, where);
        break;
      case Stage::Edge:
      case Stage::Delegated:
        if (t.dialect == TargetDialect::Aten && t.ns != "higher_order")
          throw Error("op '" + node.target +
                          "' is not in the edge namespace (executorch.exir.dialects.edge.ops.*)",
                      {}, where);
        if (t.dialect == TargetDialect::MemoryAlloc)
          throw Error("memory.alloc in a program that is not planned", {}, where);
        if (stage == Stage::Edge && t.dialect == TargetDialect::HigherOrder &&
            t.name == "executorch_call_delegate")
          break; // composition (flow 2) may bring delegate calls into an edge program
        break;
      case Stage::Planned:
        if (t.dialect == TargetDialect::Edge)
          throw Error("functional edge op '" + node.target + "' left in a planned program (expected its out variant)",
                      {}, where);
        break;
      }
    }
    if (stage == Stage::Planned) {
      if (!method.plan) throw Error("planned program has no memory plan", {}, "/memory_plans/" + name);
      const MemoryPlan &plan = *method.plan;
      if (plan.bufferSizes.empty() || plan.bufferSizes[0] != 0)
        throw Error("buffer_sizes must start with the reserved entry 0", {}, "/memory_plans/" + name + "/buffer_sizes");
      for (const auto &[tensor, alloc] : plan.allocations) {
        std::string where = "/memory_plans/" + name + "/allocations/" + tensor;
        if (alloc.memId < 1 || alloc.memId >= plan.bufferSizes.size())
          throw Error("mem_id " + std::to_string(alloc.memId) + " is not an arena of this plan", {}, where);
        const TensorMeta *meta = graph.tensorValues.find(tensor);
        if (!meta) throw Error("allocation for unknown tensor '" + tensor + "'", {}, where);
      }
    }
  }
}

} // namespace exir
