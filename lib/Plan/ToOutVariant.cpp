//===- Plan/ToOutVariant.cpp - functional ops -> out variants + allocs ----===//
//
// Upstream's ToOutVarPass: each functional edge op becomes its `.out` overload
// (add.Tensor -> add.out, max.dim -> max.dim_max) with one memory.alloc node per
// out argument inserted before it and passed as a keyword argument. The alloc
// carries the result's upper-bound shape and dtype in ExecuTorch serde's
// spelling ("(2, 2);7": size tuple; serializer dtype number). The op keeps its
// original result names; those alias the allocs (see storageAliases).
// Skipped as upstream does: delegate calls, higher-order ops, sym ops,
// memory.* nodes and in-place ops.
//
//===----------------------------------------------------------------------===//
#include "Ops/OperatorTable.h"
#include "Plan/PlanPasses.h"
#include "Support/Error.h"

namespace exir::plan {

namespace {
std::string allocSpec(const TensorMeta &meta, const ExportedProgram &ep) {
  std::string text = "(";
  for (size_t i = 0; i < meta.sizes.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(upperBound(meta.sizes[i], ep));
  }
  if (meta.sizes.size() == 1) text += ",";
  text += ");" + std::to_string(scalarTypeToSerialized(meta.dtype));
  return text;
}

} // namespace

void toOutVariant(Program &program) {
  const OperatorTable &table = OperatorTable::builtin();
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    Graph &g = ep.graph;
    std::vector<Node> result;
    result.reserve(g.nodes.size() * 2);
    int allocCount = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node &node = g.nodes[i];
      OpTarget t = parseTarget(node.target);
      bool functionalOp = t.dialect == TargetDialect::Edge ||
                          (t.dialect == TargetDialect::Aten && t.ns != "higher_order" && t.overload != "out");
      if (!functionalOp) {
        result.push_back(std::move(node));
        continue;
      }
      std::string where = "/methods/" + methodName + "/graph_module/graph/nodes/" + std::to_string(i) + " (" +
                          node.displayName() + ")";
      const OpSchema *schema = table.lookup(t.qualifiedName());
      if (!schema) throw Error("operator " + t.qualifiedName() + " is unknown to the operator table", {}, where);
      bool symOp = !schema->returns.empty() && schema->returns[0].type.base != SchemaBaseType::Tensor;
      if (schema->isInplace() || symOp) {
        node.target = atenTarget(t.ns, t.name, t.overload);
        result.push_back(std::move(node));
        continue;
      }
      const OpSchema *out = schema->isOutVariant() ? schema : table.outVariant(*schema);
      if (!out) throw Error("operator " + t.qualifiedName() + " has no out variant, so it cannot be memory-planned", {}, where);
      std::vector<const SchemaArgument *> outArgs = out->outArguments();
      std::vector<std::string> results;
      for (const auto &o : node.outputs) {
        if (o.kind == ArgKind::Tensor) results.push_back(o.name);
        else if (o.kind == ArgKind::None) results.push_back("");
        else throw Error("out-variant conversion of a node with a list output is not supported", {}, where);
      }
      if (results.size() != outArgs.size())
        throw Error("operator " + t.qualifiedName() + " has " + std::to_string(results.size()) +
                        " results but its out variant " + out->qualifiedName() + " has " +
                        std::to_string(outArgs.size()) + " out arguments",
                    {}, where);
      for (size_t k = 0; k < outArgs.size(); ++k) {
        if (results[k].empty()) {
          node.inputs.push_back(NamedArgument{outArgs[k]->name, Argument::none(), ArgumentPassing::Keyword});
          continue;
        }
        const TensorMeta *meta = g.tensorValues.find(results[k]);
        if (!meta) throw Error("result '" + results[k] + "' has no tensor metadata", {}, where);
        std::string allocName = "alloc";
        while (g.tensorValues.contains(allocName))
          allocName = "alloc_" + std::to_string(++allocCount);
        Node alloc;
        alloc.target = kAllocTarget;
        alloc.inputs.push_back(NamedArgument{"alloc_arg", Argument::string(allocSpec(*meta, ep)), ArgumentPassing::Positional});
        alloc.outputs.push_back(Argument::tensor(allocName));
        // The alloc keeps the symbolic shape (the emitter marks it DYNAMIC_BOUND);
        // its size in the alloc spec and in planning is the upper bound.
        TensorMeta allocMeta = *meta;
        g.tensorValues.set(allocName, std::move(allocMeta));
        result.push_back(std::move(alloc));
        node.inputs.push_back(NamedArgument{outArgs[k]->name, Argument::tensor(allocName), ArgumentPassing::Keyword});
      }
      node.target = atenTarget(out->ns, out->name, out->overload);
      result.push_back(std::move(node));
    }
    g.nodes = std::move(result);
  }
}

std::unordered_map<std::string, std::string> storageAliases(const Graph &graph) {
  std::unordered_map<std::string, std::string> aliases;
  std::unordered_map<std::string, bool> isAlloc;
  for (const Node &node : graph.nodes) {
    OpTarget t = parseTarget(node.target);
    if (t.dialect == TargetDialect::MemoryAlloc) {
      for (const auto &o : node.outputs)
        if (o.kind == ArgKind::Tensor) isAlloc[o.name] = true;
      continue;
    }
    if (t.dialect == TargetDialect::MemoryView) {
      if (!node.inputs.empty() && node.inputs[0].arg.kind == ArgKind::Tensor && !node.outputs.empty())
        aliases[node.outputs[0].name] = node.inputs[0].arg.name;
      continue;
    }
    // An in-place op (name ending in '_', e.g. copy_) returns its first argument's storage.
    if (t.dialect == TargetDialect::Aten && !t.name.empty() && t.name.back() == '_' && !node.inputs.empty() &&
        node.inputs[0].arg.kind == ArgKind::Tensor && !node.outputs.empty() && node.outputs[0].kind == ArgKind::Tensor) {
      aliases[node.outputs[0].name] = node.inputs[0].arg.name;
      continue;
    }
    // k-th result aliases the k-th keyword argument that names an alloc.
    std::vector<std::string> outArgs;
    for (const auto &in : node.inputs)
      if (in.kind && *in.kind == ArgumentPassing::Keyword && in.arg.kind == ArgKind::Tensor && isAlloc.count(in.arg.name))
        outArgs.push_back(in.arg.name);
    for (size_t k = 0; k < outArgs.size() && k < node.outputs.size(); ++k)
      if (node.outputs[k].kind == ArgKind::Tensor) aliases[node.outputs[k].name] = outArgs[k];
  }
  return aliases;
}

std::string storageRoot(const std::unordered_map<std::string, std::string> &aliases, std::string name) {
  for (int guard = 0; guard < 1000; ++guard) {
    auto it = aliases.find(name);
    if (it == aliases.end()) return name;
    name = it->second;
  }
  throw InternalError("alias cycle at " + name);
}

} // namespace exir::plan
