//===- Edge/Functionalize.cpp - in-place and out= ops -> functional ops ----===//
//
// torch.export's training IR keeps in-place ops (relu_, add_, index_copy_)
// and may hold out= calls. Edge is functional: each such call becomes its
// functional op, its result a new value, and every later read of the mutated
// tensor reads that value instead. A mutated buffer or user input becomes an
// extra graph output with a BUFFER_MUTATION / USER_INPUT_MUTATION spec naming
// the buffer FQN / input, placed before the user outputs as torch's
// functionalization writes them; exir-plan writes such buffers back.
// copy_ of a same-shaped value needs no op at all: the copied value becomes the
// new one. The pass runs again after the decompositions, whose rules write
// buffers back with copy_ (train-mode batch_norm's running statistics).
// One pass over the nodes with a rename map: linear in graph size.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"
#include "Ops/OperatorTable.h"
#include "Support/Error.h"

#include <algorithm>
#include <unordered_map>

namespace exir::edge {

namespace {

void renameArgument(Argument &arg, const StringMap<std::string> &current) {
  auto fix = [&](std::string &s) {
    auto it = current.find(s);
    if (it != current.end()) s = it->second;
  };
  switch (arg.kind) {
  case ArgKind::Tensor: case ArgKind::OptionalTensor: fix(arg.name); break;
  case ArgKind::Tensors: case ArgKind::OptionalTensors:
    for (auto &n : arg.names) fix(n);
    break;
  default: break;
  }
}

void functionalizeGraph(ExportedProgram &ep) {
  const OperatorTable &table = OperatorTable::builtin();
  Graph &g = ep.graph;
  StringMap<std::string> current; // mutated value -> its newest value
  StringMap<std::string> root;    // newest value -> the value first mutated
  std::vector<bool> dropped(g.nodes.size(), false);
  // Per distinct target: the parsed target and its schema (looked up once, not per node).
  struct TargetInfo {
    OpTarget target;
    const OpSchema *schema = nullptr;
  };
  StringMap<TargetInfo> infos;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node &node = g.nodes[i];
    if (!current.empty())
      for (auto &in : node.inputs) renameArgument(in.arg, current);
    auto [slot, unseen] = infos.try_emplace(node.target);
    if (unseen) {
      slot->second.target = parseTarget(node.target);
      if (slot->second.target.dialect == TargetDialect::Aten)
        slot->second.schema = table.lookup(slot->second.target.qualifiedName());
    }
    const OpTarget &t = slot->second.target;
    if (t.dialect != TargetDialect::Aten) continue;
    const OpSchema *schema = slot->second.schema;
    if (!schema && t.name.size() > 1 && t.name.back() == '_' && t.name.front() != '_') {
      std::string frame = userFrame(node);
      throw Error("in-place operator " + t.qualifiedName() + " is unknown to the operator table" +
                      (frame.empty() ? "" : " (at " + frame + ")") +
                      "; hint: add its schema and functional twin to lib/Ops/operators.txt",
                  {}, "node " + node.displayName());
    }
    if (!schema || !(schema->isInplace() || schema->isOutVariant())) continue;
    // copy_(dst, src) of a same-shaped, same-dtype src: the new value is src itself.
    if (schema->name == "copy_" && !node.outputs.empty()) {
      const Argument *dst = findArg(node, "self"), *src = findArg(node, "src");
      const TensorMeta *dm = dst ? g.tensorValues.find(dst->name) : nullptr;
      const TensorMeta *sm = src ? g.tensorValues.find(src->name) : nullptr;
      if (dm && sm && dm->dtype == sm->dtype && dm->sizes == sm->sizes) {
        std::string first = dst->name;
        if (auto it = root.find(first); it != root.end()) first = it->second;
        current[first] = src->name;
        current[dst->name] = src->name;
        current[node.outputs[0].name] = src->name;
        root[src->name] = first;
        dropped[i] = true;
        continue;
      }
    }
    const OpSchema *functional = functionalTwin(table, *schema);
    if (!functional) {
      std::string frame = userFrame(node);
      throw Error("mutating operator " + t.qualifiedName() + " has no functional variant in the operator table" +
                      (frame.empty() ? "" : " (at " + frame + ")"),
                  {}, "node " + node.displayName());
    }
    // The written argument: `self` for in-place ops, the out arguments for out= ops.
    std::vector<std::string> written;
    std::vector<NamedArgument> inputs;
    for (auto &in : node.inputs) {
      const SchemaArgument *a = schema->argument(in.name);
      if (a && a->isOut) {
        if (in.arg.kind == ArgKind::Tensor) written.push_back(in.arg.name);
        continue;
      }
      if (a && a->isWrite() && in.arg.kind == ArgKind::Tensor) written.push_back(in.arg.name);
      inputs.push_back(in);
    }
    // The functional op may name its arguments differently (dropout_'s self is dropout's input).
    const OpSchema *twin = functionalTwin(table, *schema);
    for (auto &in : inputs) {
      int k = schema->argumentIndex(in.name);
      if (twin && k >= 0 && size_t(k) < twin->arguments.size()) in.name = twin->arguments[size_t(k)].name;
    }
    if (node.outputs.size() < written.size())
      throw Error("mutating call " + t.qualifiedName() + " does not name its results", {},
                  "node " + node.displayName());
    node.inputs = std::move(inputs);
    node.target = atenTarget(functional->ns, functional->name, functional->overload.empty() ? "default"
                                                                                            : functional->overload);
    for (size_t k = 0; k < written.size(); ++k) {
      const std::string &result = node.outputs[k].name;
      std::string first = written[k];
      if (auto it = root.find(first); it != root.end()) first = it->second;
      current[first] = result;
      current[written[k]] = result;
      root[result] = first;
    }
  }
  if (std::find(dropped.begin(), dropped.end(), true) != dropped.end()) {
    std::vector<Node> kept;
    kept.reserve(g.nodes.size());
    StringMap<bool> gone;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!dropped[i]) kept.push_back(std::move(g.nodes[i]));
      else gone[g.nodes[i].outputs[0].name] = true;
    }
    g.nodes = std::move(kept);
    OrderedMap<TensorMeta> values;
    values.reserve(g.tensorValues.size());
    for (auto &[name, meta] : g.tensorValues)
      if (!gone.count(name)) values.set(name, meta);
    g.tensorValues = std::move(values);
  }
  for (auto &out : g.outputs) renameArgument(out, current);
  for (auto &spec : ep.signature.outputSpecs) renameArgument(spec.arg, current);

  // Mutated placeholders become outputs, in input order, before the user outputs.
  std::vector<Argument> newOutputs;
  std::vector<OutputSpec> newSpecs;
  for (const auto &in : ep.signature.inputSpecs) {
    if (in.arg.kind != ArgKind::Tensor) continue;
    auto it = current.find(in.arg.name);
    if (it == current.end()) continue;
    OutputSpec spec;
    if (in.kind == InputKind::Buffer) {
      spec.kind = OutputKind::BufferMutation;
      spec.target = in.target;
    } else if (in.kind == InputKind::UserInput) {
      spec.kind = OutputKind::UserInputMutation;
      spec.target = in.arg.name;
    } else {
      throw Error("the program mutates " + std::string(inputKindTag(in.kind)) + " '" + in.arg.name +
                  "', which only buffers and user inputs may be");
    }
    spec.arg = Argument::tensor(it->second);
    newSpecs.push_back(spec);
    newOutputs.push_back(Argument::tensor(it->second));
  }
  if (newSpecs.empty()) return;
  g.outputs.insert(g.outputs.begin(), newOutputs.begin(), newOutputs.end());
  ep.signature.outputSpecs.insert(ep.signature.outputSpecs.begin(), newSpecs.begin(), newSpecs.end());
}

} // namespace

bool mayMutate(const std::string &, const OpTarget &t) {
  // What functionalizeGraph rewrites or refuses; every other node it leaves alone.
  if (t.dialect != TargetDialect::Aten) return false;
  const OpSchema *schema = OperatorTable::builtin().lookup(t.qualifiedName());
  if (!schema) return t.name.size() > 1 && t.name.back() == '_' && t.name.front() != '_';
  return schema->isInplace() || schema->isOutVariant();
}

void functionalize(Program &program) {
  for (auto &[name, method] : program.methods) functionalizeGraph(method.program);
}

} // namespace exir::edge
