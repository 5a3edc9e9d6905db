//===- Plan/ToOutVariant.cpp - functional ops -> out variants + allocs ----===//
//
// Upstream's ToOutVarPass: each functional edge op becomes its `.out` overload
// (add.Tensor -> add.out, max.dim -> max.dim_max) with one memory.alloc node per
// out argument inserted before it and passed as a keyword argument. The alloc
// carries the result's upper-bound shape and dtype in ExecuTorch serde's
// spelling ("(2, 2);7": size tuple; serializer dtype number). The op keeps its
// original result names; those alias the allocs (see storageAliases).
// Skipped as upstream does: delegate calls, higher-order ops, sym ops,
// memory.* nodes and in-place ops; the branches of cond are converted
// recursively. A Tensor(a!)[] out argument (split_with_sizes_copy.out) gets one
// alloc per element of the node's list result.
//
//===----------------------------------------------------------------------===//
#include "Ops/OperatorTable.h"
#include "Plan/PlanPasses.h"
#include "Support/Error.h"

#include <string_view>
#include <unordered_map>
#include <unordered_set>

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

namespace {

std::string newAlloc(Graph &g, const TensorMeta &meta, const ExportedProgram &ep, std::vector<Node> &result,
                     int &allocCount) {
  std::string allocName = "alloc";
  while (g.tensorValues.contains(allocName)) allocName = "alloc_" + std::to_string(++allocCount);
  Node alloc;
  alloc.target = kAllocTarget;
  alloc.inputs.push_back(NamedArgument{"alloc_arg", Argument::string(allocSpec(meta, ep)), ArgumentPassing::Positional});
  alloc.outputs.push_back(Argument::tensor(allocName));
  // The alloc keeps the symbolic shape (the emitter marks it DYNAMIC_BOUND);
  // its size in the alloc spec and in planning is the upper bound.
  g.tensorValues.set(allocName, meta);
  result.push_back(std::move(alloc));
  return allocName;
}

/// What to do with every node of one target: decided once per distinct target
/// (a graph has a few dozen), not once per node.
struct Conversion {
  enum Kind { Keep, Retarget, ToOut } kind = Keep;
  std::string qualifiedName; // of the functional op, for errors
  std::string target;        // the new target (Retarget, ToOut)
  const OpSchema *out = nullptr;
  std::vector<const SchemaArgument *> outArgs;
};

/// Throws `error(message)` for an operator that cannot be converted.
template <typename ErrorAt> Conversion conversionFor(const std::string &target, const ErrorAt &error) {
  const OperatorTable &table = OperatorTable::builtin();
  OpTarget t = parseTarget(target);
  Conversion c;
  bool functionalOp = t.dialect == TargetDialect::Edge ||
                      (t.dialect == TargetDialect::Aten && t.ns != "higher_order" && t.overload != "out");
  if (!functionalOp) return c;
  c.qualifiedName = t.qualifiedName();
  const OpSchema *schema = table.lookup(c.qualifiedName);
  if (!schema) error("operator " + c.qualifiedName + " is unknown to the operator table");
  bool symOp = !schema->returns.empty() && schema->returns[0].type.base != SchemaBaseType::Tensor;
  if (schema->isInplace() || symOp) {
    c.kind = Conversion::Retarget;
    c.target = atenTarget(t.ns, t.name, t.overload);
    return c;
  }
  c.out = schema->isOutVariant() ? schema : table.outVariant(*schema);
  if (!c.out) error("operator " + c.qualifiedName + " has no out variant, so it cannot be memory-planned");
  c.kind = Conversion::ToOut;
  c.outArgs = c.out->outArguments();
  c.target = atenTarget(c.out->ns, c.out->name, c.out->overload);
  return c;
}

void convertGraph(Graph &g, const ExportedProgram &ep, const std::string &graphLoc) {
  std::vector<Node> result;
  result.reserve(g.nodes.size() * 2);
  // About one alloc per node: grow the value table once, not by doubling.
  g.tensorValues.reserve(g.tensorValues.size() + g.nodes.size());
  std::unordered_map<std::string, Conversion> conversions;
  int allocCount = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node &node = g.nodes[i];
    // Built only when needed (a subgraph, an error): a 100k-node graph would build 100k strings.
    auto where = [&] { return graphLoc + "/nodes/" + std::to_string(i) + " (" + node.displayName() + ")"; };
    // Control flow: the branches are converted like the method (upstream recurses
    // into cond / map bodies); the node itself stays.
    for (size_t a = 0; a < node.inputs.size(); ++a)
      if (node.inputs[a].arg.kind == ArgKind::Graph && node.inputs[a].arg.graph())
        convertGraph(*node.inputs[a].arg.graph(), ep, where() + "/inputs/" + std::to_string(a) + "/arg/as_graph/graph");
    auto found = conversions.find(node.target);
    if (found == conversions.end())
      found = conversions
                  .emplace(node.target, conversionFor(node.target, [&](const std::string &message) {
                             throw Error(message, {}, where());
                           }))
                  .first;
    const Conversion &c = found->second;
    if (c.kind != Conversion::ToOut) {
      if (c.kind == Conversion::Retarget) node.target = c.target;
      result.push_back(std::move(node));
      continue;
    }
    const OpSchema *out = c.out;
    const std::vector<const SchemaArgument *> &outArgs = c.outArgs;
    if (outArgs.size() != node.outputs.size())
      throw Error("operator " + c.qualifiedName + " has " + std::to_string(node.outputs.size()) +
                      " results but its out variant " + out->qualifiedName() + " has " +
                      std::to_string(outArgs.size()) + " out arguments",
                  {}, where());
    // Exactly the room for the out arguments: letting the vector double would
    // leave about 370 unused bytes per node (an Argument is large).
    node.inputs.reserve(node.inputs.size() + outArgs.size());
    for (size_t k = 0; k < outArgs.size(); ++k) {
      const Argument &res = node.outputs[k];
      bool listOut = outArgs[k]->type.isList;
      if (res.kind == ArgKind::None) {
        node.inputs.push_back(NamedArgument{outArgs[k]->name, Argument::none(), ArgumentPassing::Keyword});
        continue;
      }
      if ((res.kind == ArgKind::Tensors) != listOut || (res.kind != ArgKind::Tensor && res.kind != ArgKind::Tensors))
        throw Error("result " + std::to_string(k) + " (" + argKindTag(res.kind) + ") does not match out argument '" +
                        outArgs[k]->name + "' of " + out->qualifiedName(),
                    {}, where());
      // A Tensor(a!)[] out argument (split_with_sizes_copy.out, unbind_copy.int_out)
      // gets one alloc per list element.
      auto allocFor = [&](const std::string &name) {
        const TensorMeta *meta = g.tensorValues.find(name);
        if (!meta) throw Error("result '" + name + "' has no tensor metadata", {}, where());
        try {
          return newAlloc(g, *meta, ep, result, allocCount);
        } catch (Error &e) {
          e.withLocation(where()); // an unbounded size: name the node whose result it is
          throw;
        }
      };
      Argument out;
      if (listOut) {
        std::vector<std::string> allocs;
        allocs.reserve(res.names.size());
        for (const auto &name : res.names) allocs.push_back(allocFor(name));
        out = Argument::tensors(std::move(allocs));
      } else {
        out = Argument::tensor(allocFor(res.name));
      }
      node.inputs.push_back(NamedArgument{outArgs[k]->name, std::move(out), ArgumentPassing::Keyword});
    }
    node.target = c.target;
    result.push_back(std::move(node));
  }
  g.nodes = std::move(result);
}

} // namespace

void toOutVariant(Program &program) {
  for (auto &[methodName, method] : program.methods)
    convertGraph(method.program.graph, method.program, "/methods/" + methodName + "/graph_module/graph");
}

StorageAliasRules::Kind StorageAliasRules::kindOf(const std::string &target) {
  auto [it, inserted] = kinds_.try_emplace(target, Kind::Other);
  if (inserted) {
    OpTarget t = parseTarget(target);
    if (t.dialect == TargetDialect::MemoryAlloc) it->second = Kind::Alloc;
    else if (t.dialect == TargetDialect::MemoryView) it->second = Kind::View;
    else if (t.dialect == TargetDialect::Aten && !t.name.empty() && t.name.back() == '_') it->second = Kind::InPlace;
  }
  return it->second;
}

void forEachStorageAlias(const Graph &graph,
                         const std::function<void(const std::string &, const std::string &)> &alias) {
  // Names point into the graph, which outlives this call: no copies per node.
  ValueIndex allocs;
  StorageAliasRules rules;
  for (const Node &node : graph.nodes)
    rules.node(
        node, [&](const std::string &n) { allocs.intern(n); },
        [&](const std::string &n) { return allocs.find(n) != ValueIndex::npos; }, alias);
}

std::unordered_map<std::string, std::string> storageAliases(const Graph &graph) {
  std::unordered_map<std::string, std::string> aliases;
  forEachStorageAlias(graph, [&](const std::string &value, const std::string &base) { aliases[value] = base; });
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
