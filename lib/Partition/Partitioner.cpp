//===- Partition/Partitioner.cpp - Built-in partitioners and their registry ===//
//
// AddMulPartitionerDemo reproduces upstream's demo exactly: it supports edge
// add.Tensor and mm.default (despite the name, not mul), fuses them as
// CapabilityBasedPartitioner(allows_single_node_partition=True) does, tags
// partition p "tag<p.id>", never tags placeholders, and lowers every tag to
// BackendWithCompilerDemo with CompileSpec("max_value", bytes([4])).
//
//===----------------------------------------------------------------------===//
#include "Partition/Partitioner.h"
#include "Edge/EdgeUtil.h"
#include "Partition/Fusion.h"
#include "Support/Error.h"

#include <sstream>
#include <unordered_map>

namespace exir::partition {

Partitioner::~Partitioner() = default;

void tagOwnedConstants(const ExportedProgram &method, PartitionResult &result) {
  const Graph &g = method.graph;
  result.inputTags.resize(g.inputs.size());
  std::unordered_map<std::string, std::vector<size_t>> usersOf;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::vector<std::string> names;
    for (const auto &in : g.nodes[i].inputs) in.arg.collectTensorNames(names);
    for (const auto &n : names) {
      auto &users = usersOf[n];
      if (users.empty() || users.back() != i) users.push_back(i);
    }
  }
  std::unordered_map<std::string, bool> graphOutput;
  for (const auto &o : g.outputs) {
    std::vector<std::string> names;
    o.collectTensorNames(names);
    for (const auto &n : names) graphOutput[n] = true;
  }
  for (size_t i = 0; i < g.inputs.size() && i < method.signature.inputSpecs.size(); ++i) {
    const InputSpec &spec = method.signature.inputSpecs[i];
    if (spec.kind != InputKind::Parameter && spec.kind != InputKind::Buffer && spec.kind != InputKind::TensorConstant)
      continue;
    if (!g.inputs[i].isTensor() || graphOutput.count(g.inputs[i].name)) continue;
    bool mutated = false;
    for (const auto &out : method.signature.outputSpecs)
      if ((out.kind == OutputKind::BufferMutation || out.kind == OutputKind::ParameterMutation) &&
          out.target == spec.target)
        mutated = true;
    if (mutated) continue;
    auto it = usersOf.find(g.inputs[i].name);
    if (it == usersOf.end()) continue;
    const std::string &tag = result.nodeTags.at(it->second.front());
    bool same = !tag.empty();
    for (size_t u : it->second) same = same && result.nodeTags.at(u) == tag;
    if (same) result.inputTags[i] = tag;
  }
}

namespace {

class AddMulPartitionerDemo final : public Partitioner {
public:
  std::string name() const override { return "AddMulPartitionerDemo"; }
  PartitionResult partition(const ExportedProgram &method) const override {
    const Graph &g = method.graph;
    std::vector<bool> supported(g.nodes.size(), false);
    edge::TargetCache targets; // a few dozen distinct targets among 100k nodes
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const OpTarget &t = targets(g.nodes[i]);
      supported[i] = t.dialect == TargetDialect::Edge && t.ns == "aten" &&
                     ((t.name == "add" && t.overload == "Tensor") || (t.name == "mm" && t.overload == "default"));
    }
    PartitionResult result;
    result.nodeTags.assign(g.nodes.size(), "");
    result.inputTags.assign(g.inputs.size(), "");
    DelegationSpec spec{"BackendWithCompilerDemo", {CompileSpec{"max_value", std::string(1, '\x04')}}, {}};
    auto deps = std::make_shared<const NodeDependencies>(NodeDependencies::of(g));
    result.dependencies = deps;
    for (const auto &p : proposePartitions(*deps, supported, {FusionMode::Upstream, 0, 1})) {
      std::string tag = "tag" + std::to_string(p.id);
      for (size_t n : p.nodes) result.nodeTags[n] = tag;
      result.partitionTags.set(tag, spec);
    }
    return result;
  }
};

class NodeListPartitioner final : public Partitioner {
public:
  NodeListPartitioner(std::vector<std::vector<std::string>> groups, DelegationSpec spec)
      : groups_(std::move(groups)), spec_(std::move(spec)) {}
  std::string name() const override { return "nodes"; }
  PartitionResult partition(const ExportedProgram &method) const override {
    const Graph &g = method.graph;
    std::unordered_map<std::string, size_t> byName;
    for (size_t i = 0; i < g.nodes.size(); ++i) byName.emplace(g.nodes[i].displayName(), i);
    PartitionResult result;
    result.nodeTags.assign(g.nodes.size(), "");
    result.inputTags.assign(g.inputs.size(), "");
    for (size_t k = 0; k < groups_.size(); ++k) {
      std::string tag = "tag" + std::to_string(k);
      for (const auto &name : groups_[k]) {
        auto it = byName.find(name);
        if (it == byName.end()) throw Error("partitioner nodes: the method has no node named '" + name + "'");
        if (!result.nodeTags[it->second].empty())
          throw Error("partitioner nodes: node '" + name + "' is listed in two groups");
        result.nodeTags[it->second] = tag;
      }
      result.partitionTags.set(tag, spec_);
    }
    tagOwnedConstants(method, result);
    return result;
  }

private:
  std::vector<std::vector<std::string>> groups_;
  DelegationSpec spec_;
};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

} // namespace

std::unique_ptr<Partitioner> makeAddMulPartitionerDemo() { return std::make_unique<AddMulPartitionerDemo>(); }

std::unique_ptr<Partitioner> makeNodeListPartitioner(const std::string &groups, DelegationSpec spec) {
  std::vector<std::vector<std::string>> parsed;
  for (const auto &group : split(groups, ';')) {
    std::vector<std::string> names;
    for (const auto &name : split(group, ','))
      if (!name.empty()) names.push_back(name);
    if (names.empty()) throw Error("partitioner 'nodes:" + groups + "': an empty group");
    parsed.push_back(std::move(names));
  }
  if (parsed.empty()) throw Error("partitioner 'nodes:' needs node names, e.g. nodes:aten_mm_default,aten_add_tensor");
  return std::make_unique<NodeListPartitioner>(std::move(parsed), std::move(spec));
}

} // namespace exir::partition
