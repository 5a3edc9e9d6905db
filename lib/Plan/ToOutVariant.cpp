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

#include <algorithm>
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

/// A memory.alloc node for a result with `meta`; its value goes into the table.
Node newAlloc(Graph &g, const TensorMeta &meta, const ExportedProgram &ep, int &allocCount, std::string &allocNameOut) {
  std::string allocName = "alloc";
  while (g.tensorValues.contains(allocName)) allocName = "alloc_" + std::to_string(++allocCount);
  Node alloc;
  alloc.target = kAllocTarget;
  alloc.inputs.push_back(NamedArgument{"alloc_arg", Argument::string(allocSpec(meta, ep)), ArgumentPassing::Positional});
  alloc.outputs.push_back(Argument::tensor(allocName));
  // The alloc keeps the symbolic shape (the emitter marks it DYNAMIC_BOUND);
  // its size in the alloc spec and in planning is the upper bound.
  g.tensorValues.set(allocName, meta);
  allocNameOut = std::move(allocName);
  return alloc;
}

/// What to do with every node of one target: decided once per distinct target
/// (a graph has a few dozen), not once per node.
struct Conversion {
  enum Kind { Keep, Retarget, ToOut, Fails } kind = Keep;
  std::string error;         // why the op cannot be converted (Fails)
  std::string qualifiedName; // of the functional op, for errors
  std::string target;        // the new target (Retarget, ToOut)
  const OpSchema *out = nullptr;
  std::vector<const SchemaArgument *> outArgs;
};

/// Throws `error(message)` for an operator that cannot be converted.
template <typename ErrorAt> Conversion conversionFor(const std::string &target, const ErrorAt &error);

/// The same, with the reason kept in the result (kind Fails) instead.
Conversion conversionOrFailure(const std::string &target) {
  struct Refused {
    std::string message;
  };
  try {
    return conversionFor(target, [](const std::string &message) { throw Refused{message}; });
  } catch (Refused &r) {
    Conversion c;
    c.kind = Conversion::Fails;
    c.error = std::move(r.message);
    return c;
  }
}

/// How many allocs converting `node` adds (none where it will fail).
size_t allocsFor(const Node &node, const Conversion &c) {
  if (c.kind != Conversion::ToOut || c.outArgs.size() != node.outputs.size()) return 0;
  size_t count = 0;
  for (size_t k = 0; k < c.outArgs.size(); ++k) {
    const Argument &res = node.outputs[k];
    if (res.kind == ArgKind::Tensors && c.outArgs[k]->type.isList) count += res.names.size();
    else if (res.kind == ArgKind::Tensor && !c.outArgs[k]->type.isList) ++count;
  }
  return count;
}

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
  // The allocs go in place: the nodes move to the end of the list, grown by
  // the number of allocs (within the room the reader leaves, on a method
  // read from JSON), and are written back from the front with their allocs
  // before them. A second list of every node was 35 MB of fresh memory at
  // 100k nodes, and fresh pages cost more than the moves.
  std::unordered_map<std::string, Conversion> conversions;
  auto conversionOf = [&](const std::string &target) -> const Conversion & {
    auto found = conversions.find(target);
    if (found == conversions.end()) found = conversions.emplace(target, conversionOrFailure(target)).first;
    return found->second;
  };
  const size_t n = g.nodes.size();
  size_t extra = 0;
  for (const Node &node : g.nodes) extra += allocsFor(node, conversionOf(node.target));
  if (extra > 0) { // (with none, every node would be moved onto itself, which empties its vectors)
    g.nodes.resize(n + extra);
    std::move_backward(g.nodes.begin(), g.nodes.begin() + ptrdiff_t(n), g.nodes.end());
  }
  size_t written = 0; // g.nodes[0, written) is the converted graph so far
  // An alloc must land before the node it serves (still at `from`), which can
  // itself stay where it is.
  auto emit = [&](Node &&node, size_t from, bool alloc) {
    if (alloc ? written >= from : written > from) throw InternalError("to-out-variant: more allocs than counted");
    if (written != from) g.nodes[written] = std::move(node);
    ++written;
  };
  // About one alloc per node: grow the value table once, not by doubling.
  g.tensorValues.reserve(g.tensorValues.size() + extra);
  int allocCount = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t from = extra + i;
    Node &node = g.nodes[from];
    // Built only when needed (a subgraph, an error): a 100k-node graph would build 100k strings.
    auto where = [&] { return graphLoc + "/nodes/" + std::to_string(i) + " (" + node.displayName() + ")"; };
    // Control flow: the branches are converted like the method (upstream recurses
    // into cond / map bodies); the node itself stays.
    for (size_t a = 0; a < node.inputs.size(); ++a)
      if (node.inputs[a].arg.kind == ArgKind::Graph && node.inputs[a].arg.graph())
        convertGraph(*node.inputs[a].arg.graph(), ep, where() + "/inputs/" + std::to_string(a) + "/arg/as_graph/graph");
    const Conversion &c = conversionOf(node.target);
    if (c.kind == Conversion::Fails) throw Error(c.error, {}, where());
    if (c.kind != Conversion::ToOut) {
      if (c.kind == Conversion::Retarget) node.target = c.target;
      emit(std::move(node), from, false);
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
          std::string allocName;
          emit(newAlloc(g, *meta, ep, allocCount, allocName), from, true);
          return allocName;
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
    emit(std::move(node), from, false);
  }
  if (written != g.nodes.size()) throw InternalError("to-out-variant: fewer allocs than counted");
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
