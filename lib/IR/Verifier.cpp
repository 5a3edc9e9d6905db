//===- IR/Verifier.cpp - Stage invariants ---------------------------------===//
//
// Structural rules for every stage, then what each stage promises. Locations use
// the JSON pointer of the stage artifact (/methods/<m>/graph_module/graph/nodes/<i>)
// plus the node's value name, so a message can be found in the file.
//
//===----------------------------------------------------------------------===//
#include "IR/Verifier.h"
#include "IR/ValueNames.h"
#include "Support/CheckedMath.h"
#include "Support/Error.h"
#include "Support/Parallel.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_set>

namespace exir {

namespace {

std::string graphLocation(const std::string &method) { return "/methods/" + method + "/graph_module/graph"; }

std::string nodeLocation(const std::string &graphLoc, size_t index, const Node &node) {
  std::string loc = graphLoc + "/nodes/" + std::to_string(index);
  std::string name = node.displayName();
  if (!name.empty()) loc += " (" + name + ")";
  return loc;
}

/// Names an argument defines when it appears in a node's outputs / graph inputs.
template <typename F> void forEachDefinedName(const Argument &arg, F &&f) {
  forEachValueName(arg, f);
  if (arg.kind == ArgKind::CustomObj) f(arg.name);
}

/// Where a subgraph argument of a node sits: <node>/inputs/<k>/arg/as_graph/graph.
std::string subgraphLocation(const std::string &nodeLoc, size_t argIndex) {
  std::string base = nodeLoc.substr(0, nodeLoc.find(" ("));
  return base + "/inputs/" + std::to_string(argIndex) + "/arg/as_graph/graph";
}

/// cond(pred, true_graph, false_graph, operands): both branches take the operands
/// and return what the node returns.
void verifyCond(const Node &node, const std::string &where) {
  if (node.inputs.size() != 4 || node.inputs[1].arg.kind != ArgKind::Graph ||
      node.inputs[2].arg.kind != ArgKind::Graph || node.inputs[3].arg.kind != ArgKind::Tensors)
    throw Error("cond expects (pred, true_graph, false_graph, operands)", {}, where);
  const Argument &pred = node.inputs[0].arg;
  if (pred.kind != ArgKind::Tensor && pred.kind != ArgKind::SymBool && pred.kind != ArgKind::Bool)
    throw Error(std::string("cond predicate must be a tensor or a bool, got ") + argKindTag(pred.kind), {},
                where + "/inputs/0");
  size_t operands = node.inputs[3].arg.names.size();
  for (size_t k : {size_t(1), size_t(2)}) {
    const Argument &branch = node.inputs[k].arg;
    if (!branch.graph()) throw Error("cond branch '" + branch.graphName() + "' has no graph", {}, where);
    if (branch.graph()->inputs.size() != operands)
      throw Error("cond branch '" + branch.graphName() + "' takes " + std::to_string(branch.graph()->inputs.size()) +
                      " inputs but cond passes " + std::to_string(operands) + " operands",
                  {}, subgraphLocation(where, k) + "/inputs");
    if (branch.graph()->outputs.size() != node.outputs.size())
      throw Error("cond branch '" + branch.graphName() + "' returns " + std::to_string(branch.graph()->outputs.size()) +
                      " values but the cond node has " + std::to_string(node.outputs.size()) + " outputs",
                  {}, subgraphLocation(where, k) + "/outputs");
  }
}

/// Static sizes, strides and the storage offset are not negative, and the
/// tensor's static byte size fits in int64 (a size like [2^62, 4] would
/// overflow every later size computation).
void verifyTensorMeta(const std::string &name, const TensorMeta &meta, const std::string &graphLoc) {
  // Built only for an error: a 100k-node graph has ~300k tensor values.
  auto whereOf = [&] { return graphLoc + "/tensor_values/" + name; };
  int64_t bytes = int64_t(elementSize(meta.dtype));
  for (size_t d = 0; d < meta.sizes.size(); ++d) {
    const SymInt &s = meta.sizes[d];
    if (s.isExpr) continue;
    if (s.value < 0)
      throw Error("tensor '" + name + "' has negative size " + std::to_string(s.value) + " in dim " + std::to_string(d),
                  {}, whereOf() + "/sizes/" + std::to_string(d));
    if (!checkedMul<int64_t>(bytes, s.value)) {
      std::string shape;
      for (const auto &t : meta.sizes) shape += (shape.empty() ? "" : ", ") + (t.isExpr ? t.expr() : std::to_string(t.value));
      throw Error("tensor '" + name + "' of sizes [" + shape + "] and " + std::to_string(elementSize(meta.dtype)) +
                      "-byte elements is larger than 2^63-1 bytes",
                  {}, whereOf() + "/sizes");
    }
    bytes = *checkedMul<int64_t>(bytes, s.value);
  }
  for (size_t d = 0; d < meta.strides.size(); ++d)
    if (!meta.strides[d].isExpr && meta.strides[d].value < 0)
      throw Error("tensor '" + name + "' has negative stride " + std::to_string(meta.strides[d].value) + " in dim " +
                      std::to_string(d),
                  {}, whereOf() + "/strides/" + std::to_string(d));
  if (!meta.storageOffset.isExpr && meta.storageOffset.value < 0)
    throw Error("tensor '" + name + "' has negative storage offset " + std::to_string(meta.storageOffset.value), {},
                whereOf() + "/storage_offset");
}

/// A value has one kind, so its name sits in at most one of the graph's value
/// tables (torch.export keys them all by the FX node's unique name). Passes and
/// the partitioner copy a value's metadata from the one table that holds it.
/// The symbolic and object tables are small: each name is looked up in the
/// tables before it, not the 300k tensor values against the others.
void verifyValueTablesDisjoint(const Graph &graph, const std::string &graphLoc) {
  auto refuseIfHeldBefore = [&](std::string_view table, const std::string &name, auto... earlier) {
    auto check = [&](std::string_view earlierTable, const auto &map) {
      if (map.contains(name))
        throw Error("value '" + name + "' is in both " + std::string(earlierTable) + " and " + std::string(table) +
                        "; a value has one kind, so its name belongs in one table",
                    {}, graphLoc + "/" + std::string(table) + "/" + name);
    };
    (check(earlier.first, *earlier.second), ...);
  };
  auto tensors = std::pair("tensor_values", &graph.tensorValues);
  auto ints = std::pair("sym_int_values", &graph.symIntValues);
  auto bools = std::pair("sym_bool_values", &graph.symBoolValues);
  auto floats = std::pair("sym_float_values", &graph.symFloatValues);
  for (const auto &entry : graph.symIntValues) refuseIfHeldBefore(ints.first, entry.first, tensors);
  for (const auto &entry : graph.symBoolValues) refuseIfHeldBefore(bools.first, entry.first, tensors, ints);
  for (const auto &entry : graph.symFloatValues) refuseIfHeldBefore(floats.first, entry.first, tensors, ints, bools);
  for (const auto &entry : graph.customObjValues)
    refuseIfHeldBefore("custom_obj_values", entry.first, tensors, ints, bools, floats);
}

/// Graphs with fewer tensor values have their tables checked on the same
/// thread as their nodes: a second one costs more than it saves there.
constexpr size_t kTablesBesideMinValues = 4096;

void verifyGraphWalk(const Graph &graph, const std::string &graphLoc, bool requireMeta, GraphValueIds *index);

/// `index` (when given, numbering `graph`) ends up holding the graph's value
/// names: the tensor_values keys, as ids 0..n-1 in their order, then the
/// other defined names.
void verifyGraph(const Graph &graph, const std::string &graphLoc, bool requireMeta, GraphValueIds *index = nullptr) {
  // The value tables, then the inputs, nodes and outputs in order. On a big
  // graph the tables are checked on a second thread beside the rest (which
  // reads names, not metadata): runBeside rethrows the tables' error first,
  // the error a serial check meets first.
  auto tables = [&] {
    for (const auto &[name, meta] : graph.tensorValues) verifyTensorMeta(name, meta, graphLoc);
    verifyValueTablesDisjoint(graph, graphLoc);
  };
  auto walk = [&] { verifyGraphWalk(graph, graphLoc, requireMeta, index); };
  if (graph.tensorValues.size() >= kTablesBesideMinValues) {
    runBeside(tables, walk);
  } else {
    tables();
    walk();
  }
}

void verifyGraphWalk(const Graph &graph, const std::string &graphLoc, bool requireMeta, GraphValueIds *index) {
  // Dense ids for the names: the tensor_values keys are ids 0..n-1, so "has
  // metadata" is a comparison and "defined" a flag; a 100k-node graph has
  // ~500k uses.
  std::optional<GraphValueIds> local;
  GraphValueIds &ids = index ? *index : local.emplace(graph.tensorValues);
  std::vector<uint8_t> defined(ids.size(), 0);
  const uint32_t numTensorValues = ids.numTensorValues();
  DefinitionCursor cursor;
  auto nameAt = [&](uint32_t id) { return ids.name(id); };
  // Locations are built only for an error: a 100k-node graph would build 100k strings.
  auto define = [&](const std::string &name, const auto &where) {
    if (name.empty()) return;
    uint32_t id = cursor.match(name, numTensorValues, nameAt);
    if (id == GraphValueIds::npos) {
      id = ids.find(name);
      if (id < numTensorValues) cursor.found(id);
    }
    if (id != GraphValueIds::npos && defined[id]) throw Error("value '" + name + "' is defined twice", {}, where());
    if (id == GraphValueIds::npos) {
      // Not a tensor value (those were all added above): a symbolic value or an object.
      if (requireMeta && !graph.symIntValues.contains(name) && !graph.symBoolValues.contains(name) &&
          !graph.symFloatValues.contains(name) && !graph.customObjValues.contains(name))
        throw Error("value '" + name + "' has no entry in tensor_values/sym_*_values", {}, where());
      id = ids.intern(name);
      defined.resize(ids.size(), 0);
    }
    defined[id] = 1;
  };
  auto isDefined = [&](const std::string &name) {
    uint32_t id = ids.find(name);
    return id != GraphValueIds::npos && defined[id];
  };
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    forEachDefinedName(graph.inputs[i], [&](const std::string &n) {
      define(n, [&] { return graphLoc + "/inputs/" + std::to_string(i); });
    });
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node &node = graph.nodes[i];
    auto where = [&] { return nodeLocation(graphLoc, i, node); };
    if (node.target.empty()) throw Error("node has an empty target", {}, where());
    // A subgraph has its own values: its inputs are bound to the node's operands.
    for (size_t a = 0; a < node.inputs.size(); ++a)
      if (node.inputs[a].arg.kind == ArgKind::Graph && node.inputs[a].arg.graph())
        verifyGraph(*node.inputs[a].arg.graph(), subgraphLocation(where(), a), requireMeta);
    if (node.target == "torch.ops.higher_order.cond") verifyCond(node, where());
    for (size_t a = 0; a < node.inputs.size(); ++a)
      forEachValueName(node.inputs[a].arg, [&](const std::string &u) {
        if (!isDefined(u))
          throw Error("uses '" + u + "' before it is defined (argument '" + node.inputs[a].name +
                          "'; graph not in topological order or value missing)",
                      {}, where() + "/inputs/" + std::to_string(a));
      });
    for (const auto &out : node.outputs) forEachDefinedName(out, [&](const std::string &n) { define(n, where); });
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    forEachValueName(graph.outputs[i], [&](const std::string &u) {
      if (!isDefined(u))
        throw Error("graph output '" + u + "' is not defined", {}, graphLoc + "/outputs/" + std::to_string(i));
    });
}

/// The name a signature spec refers to, for matching against graph inputs/outputs.
std::string_view specArgName(const Argument &arg) {
  switch (arg.kind) {
  case ArgKind::Tensor: case ArgKind::CustomObj: case ArgKind::OptionalTensor: return arg.name;
  case ArgKind::SymInt: case ArgKind::SymBool: case ArgKind::SymFloat:
    return arg.syms.empty() || !arg.syms[0].isName ? std::string_view() : std::string_view(arg.syms[0].name);
  default: return "";
  }
}

/// Whether the stage rules can pass `target` without parsing it (parseTarget
/// builds several strings; a 100k-node graph checks 100k targets): an edge op
/// in an edge or delegated program, and in a planned program any op outside the
/// edge namespace whose name cannot be a runtime assert (see isGraphAssert).
bool passesStageRulesUnparsed(const std::string &target, Stage stage) {
  static constexpr std::string_view kEdgePrefix = "executorch.exir.dialects.edge.ops.";
  bool edgeOp = std::string_view(target).substr(0, kEdgePrefix.size()) == kEdgePrefix;
  switch (stage) {
  case Stage::Edge:
  case Stage::Delegated: return edgeOp;
  case Stage::Planned:
    return !edgeOp && target.find("assert") == std::string::npos && target.find("constrain") == std::string::npos;
  default: return false;
  }
}

void verifyStageRules(const Graph &graph, const std::string &graphLoc, Stage stage) {
  // Targets that passed, parsed once each: an ATen graph has a handful of
  // distinct targets over 100k nodes (a string compare, not a parse, per node).
  std::vector<const std::string *> passed;
  constexpr size_t kMaxPassed = 16;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node &node = graph.nodes[i];
    auto where = [&] { return nodeLocation(graphLoc, i, node); }; // built only for an error
    for (size_t a = 0; a < node.inputs.size(); ++a)
      if (node.inputs[a].arg.kind == ArgKind::Graph && node.inputs[a].arg.graph())
        verifyStageRules(*node.inputs[a].arg.graph(), subgraphLocation(where(), a), stage);
    if (passesStageRulesUnparsed(node.target, stage)) continue;
    if (std::any_of(passed.begin(), passed.end(), [&](const std::string *p) { return *p == node.target; })) continue;
    if (passed.size() < kMaxPassed) passed.push_back(&node.target); // one that fails throws below
    OpTarget t = parseTarget(node.target);
    switch (stage) {
    case Stage::Aten:
      if (t.dialect == TargetDialect::Edge || t.dialect == TargetDialect::MemoryAlloc)
        throw Error("edge/executorch op '" + node.target + "' in an ATen-dialect program", {}, where());
      break;
    case Stage::Edge:
    case Stage::Delegated:
      // Sym ops and runtime asserts stay ATen ops in the edge dialect, as upstream keeps them.
      if (t.dialect == TargetDialect::Aten && !staysAtenInEdge(t))
        throw Error("op '" + node.target +
                        "' is not in the edge namespace (executorch.exir.dialects.edge.ops.*)",
                    {}, where());
      if (t.dialect == TargetDialect::MemoryAlloc)
        throw Error("memory.alloc in a program that is not planned", {}, where());
      break;
    case Stage::Planned:
      if (t.dialect == TargetDialect::Edge)
        throw Error("functional edge op '" + node.target + "' left in a planned program (expected its out variant)",
                    {}, where());
      if (isGraphAssert(t))
        throw Error("runtime assert '" + node.target + "' left in a planned program (exir-plan removes them)", {},
                    where());
      break;
    }
  }
}

/// The graph a scoped allocation key ("true_graph_0/alloc") belongs to, and the
/// value name inside it (`local`, set only for a scoped key: a key without a
/// path is the name itself); nullptr when the path names no subgraph.
const Graph *graphOfScopedName(const Graph &graph, const std::string &key, std::string &local) {
  auto slash = key.rfind('/');
  if (slash == std::string::npos) return &graph;
  std::string path = key.substr(0, slash);
  local = key.substr(slash + 1);
  const Graph *found = nullptr;
  forEachSubgraph(graph, [&](const Graph &g, const std::string &p) {
    if (!found && p == path) found = &g;
  });
  return found;
}

} // namespace

namespace {

/// verifyMethodStructure; `index` (when given) gets the names of the method's
/// graph as verifyGraph numbers them.
void verifyMethodStructureImpl(const ExportedProgram &ep, const std::string &method, GraphValueIds *index) {
  const Graph &graph = ep.graph;
  verifyGraph(graph, graphLocation(method), /*requireMeta=*/true, index);
  const auto &ins = ep.signature.inputSpecs;
  const auto &outs = ep.signature.outputSpecs;
  if (ins.size() != graph.inputs.size())
    throw Error("graph signature has " + std::to_string(ins.size()) + " input specs but the graph has " +
                    std::to_string(graph.inputs.size()) + " inputs",
                {}, "/methods/" + method + "/graph_module/signature/input_specs");
  for (size_t i = 0; i < ins.size(); ++i) {
    std::string_view a = specArgName(ins[i].arg), b = specArgName(graph.inputs[i]);
    if (a != b)
      throw Error("input spec names '" + std::string(a) + "' but graph input " + std::to_string(i) + " is '" +
                      std::string(b) + "'",
                  {},
                  "/methods/" + method + "/graph_module/signature/input_specs/" + std::to_string(i));
  }
  if (outs.size() != graph.outputs.size())
    throw Error("graph signature has " + std::to_string(outs.size()) + " output specs but the graph has " +
                    std::to_string(graph.outputs.size()) + " outputs",
                {}, "/methods/" + method + "/graph_module/signature/output_specs");
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string_view a = specArgName(outs[i].arg), b = specArgName(graph.outputs[i]);
    if (a != b)
      throw Error("output spec names '" + std::string(a) + "' but graph output " + std::to_string(i) + " is '" +
                      std::string(b) + "'",
                  {},
                  "/methods/" + method + "/graph_module/signature/output_specs/" + std::to_string(i));
  }
}

} // namespace

void verifyMethodStructure(const ExportedProgram &ep, const std::string &method) {
  verifyMethodStructureImpl(ep, method, nullptr);
}

void verifyMethod(const ExportedProgram &ep, const std::string &method, Stage stage) {
  if (stage == Stage::Planned) throw InternalError("verifyMethod: a planned method is checked with its program");
  GraphValueIds ids(ep.graph.tensorValues);
  verifyMethodStructureImpl(ep, method, &ids);
  verifyStageRules(ep.graph, graphLocation(method), stage);
}

void verifyProgram(const Program &program, Stage stage) {
  if (program.stage != stage)
    throw Error(std::string("expected a program of stage '") + stageName(stage) + "', got '" +
                stageName(program.stage) + "'");
  if (program.methods.empty()) throw Error("program has no methods", {}, "/methods");
  for (const auto &[name, method] : program.methods) {
    const Graph &graph = method.program.graph;
    GraphValueIds ids(graph.tensorValues); // the tensor_values keys are ids 0..n-1
    verifyMethodStructureImpl(method.program, name, &ids);
    verifyStageRules(graph, graphLocation(name), stage);
    if (stage == Stage::Planned) {
      if (!method.plan) throw Error("planned program has no memory plan", {}, "/memory_plans/" + name);
      const MemoryPlan &plan = *method.plan;
      if (plan.bufferSizes.empty() || plan.bufferSizes[0] != 0)
        throw Error("buffer_sizes must start with the reserved entry 0", {}, "/memory_plans/" + name + "/buffer_sizes");
      // exir-plan writes the allocations in tensor_values order: the name after
      // the last one matched is tried before a lookup.
      uint32_t next = 0;
      for (const auto &[tensor, alloc] : plan.allocations) {
        // Built only for an error; clang 14 cannot capture structured bindings.
        auto where = [&methodName = name, &tensorName = tensor] {
          return "/memory_plans/" + methodName + "/allocations/" + tensorName;
        };
        if (alloc.memId < 1 || alloc.memId >= plan.bufferSizes.size())
          throw Error("mem_id " + std::to_string(alloc.memId) + " is not an arena of this plan", {}, where());
        // A key of the method's own graph: one lookup in the names numbered above.
        if (tensor.find('/') == std::string::npos) {
          uint32_t id = next < graph.tensorValues.size() && ids.name(next) == tensor ? next : ids.find(tensor);
          if (id >= graph.tensorValues.size())
            throw Error("allocation for unknown tensor '" + tensor + "'", {}, where());
          next = id + 1;
          continue;
        }
        std::string local;
        const Graph *owner = graphOfScopedName(graph, tensor, local);
        const TensorMeta *meta = owner ? owner->tensorValues.find(local.empty() ? tensor : local) : nullptr;
        if (!meta) throw Error("allocation for unknown tensor '" + tensor + "'", {}, where());
      }
    }
  }
}

} // namespace exir
