//===- Plan/MemoryPlanning.cpp - lifetimes, placement, plan record --------===//
//
// Lifetimes follow upstream (pte-format.md §5.3): placeholders are numbered
// first, then the nodes, then the output; each storage lives from its first to
// its last appearance (definition or use), inclusive. Values that share storage
// (an op's result and its alloc, a view and its base) are one storage. What is
// planned follows §5.4: user inputs and mutable buffers (per options), allocs,
// delegate and other node outputs; never constants. The placement itself is
// Placement.h's; the result is checked by the plan verifier before it is
// recorded in the method's MemoryPlan.
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanPasses.h"
#include "Plan/PlanVerifier.h"
#include "Support/Error.h"

#include <algorithm>
#include <sstream>
#include <unordered_set>

namespace exir::plan {

namespace {

uint64_t byteSize(const TensorMeta &meta, const ExportedProgram &ep) {
  uint64_t n = elementSize(meta.dtype);
  for (const auto &s : meta.sizes) n *= uint64_t(std::max<int64_t>(upperBound(s, ep), 0));
  return n;
}

uint32_t memIdFor(const PlanningOptions &options, const char *kind) {
  auto it = options.memIds.find(kind);
  return it == options.memIds.end() ? 1 : it->second;
}

} // namespace

std::map<std::string, MethodPlanDetails> planProgram(Program &program, const PlanningOptions &options) {
  checkAlignment(options.alignment);
  std::map<std::string, MethodPlanDetails> details;
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    const Graph &g = ep.graph;
    auto aliases = storageAliases(g);

    // Classify graph inputs.
    std::unordered_set<std::string> constants, userInputs, mutableBuffers, graphOutputs;
    std::unordered_set<std::string> mutatedBufferNames;
    for (const auto &spec : ep.signature.outputSpecs)
      if (spec.kind == OutputKind::BufferMutation) mutatedBufferNames.insert(spec.target);
    for (const auto &spec : ep.signature.inputSpecs) {
      if (spec.arg.kind != ArgKind::Tensor) continue;
      switch (spec.kind) {
      case InputKind::UserInput: userInputs.insert(spec.arg.name); break;
      case InputKind::Buffer:
        if (mutatedBufferNames.count(spec.target)) mutableBuffers.insert(spec.arg.name);
        else constants.insert(spec.arg.name);
        break;
      default: constants.insert(spec.arg.name); break;
      }
    }
    for (const auto &o : g.outputs) {
      std::vector<std::string> names;
      o.collectTensorNames(names);
      for (auto &n : names) graphOutputs.insert(storageRoot(aliases, n));
    }

    // Lifetimes over storage roots, in first-appearance order.
    std::vector<std::string> order;
    std::unordered_map<std::string, std::pair<uint32_t, uint32_t>> life;
    auto touch = [&](const std::string &name, uint32_t t) {
      std::string root = storageRoot(aliases, name);
      auto it = life.find(root);
      if (it == life.end()) {
        life[root] = {t, t};
        order.push_back(root);
      } else {
        it->second.first = std::min(it->second.first, t);
        it->second.second = std::max(it->second.second, t);
      }
    };
    uint32_t t = 0;
    for (const auto &in : g.inputs) {
      std::vector<std::string> names;
      in.collectTensorNames(names);
      for (auto &n : names) touch(n, 0);
      ++t;
    }
    for (const Node &node : g.nodes) {
      for (const auto &in : node.inputs) {
        std::vector<std::string> names;
        in.arg.collectTensorNames(names);
        for (auto &n : names) touch(n, t);
      }
      for (const auto &o : node.outputs) {
        std::vector<std::string> names;
        o.collectTensorNames(names);
        for (auto &n : names) touch(n, t);
      }
      ++t;
    }
    uint32_t outputTime = t;
    for (const auto &name : graphOutputs) touch(name, outputTime);
    for (const auto &name : mutableBuffers) life[storageRoot(aliases, name)].second = outputTime;

    MethodPlanDetails d;
    std::unordered_map<std::string, size_t> itemOf;
    for (const auto &root : order) {
      if (constants.count(root)) continue;
      const TensorMeta *meta = g.tensorValues.find(root);
      if (!meta) continue; // sym values, custom objects
      bool isInput = userInputs.count(root) != 0;
      bool isBuffer = mutableBuffers.count(root) != 0;
      bool isOutput = graphOutputs.count(root) != 0;
      if (isInput && !options.allocGraphInputs) continue;
      if (isBuffer && !options.allocMutableBuffers) continue;
      if (isOutput && !isInput && !options.allocGraphOutputs) continue;
      const char *kind = isBuffer ? "buffers" : isInput ? "inputs" : isOutput ? "outputs" : "activations";
      PlanItem item;
      item.name = root;
      item.size = byteSize(*meta, ep);
      item.start = life[root].first;
      item.end = life[root].second;
      item.memId = memIdFor(options, kind);
      itemOf[root] = d.items.size();
      d.items.push_back(item);
    }

    PlanOptions planOptions;
    planOptions.alignment = options.alignment;
    d.placement = planMemory(d.items, options.algorithm, planOptions);
    verifyPlacement(d.items, d.placement, options.alignment);
    d.lowerBounds = lowerBounds(d.items, options.alignment);

    MemoryPlan plan;
    plan.algorithm = d.placement.algorithm;
    plan.alignment = options.alignment;
    plan.bufferSizes = d.placement.arenaSizes;
    plan.lowerBounds = d.lowerBounds;
    plan.lowerBounds.resize(plan.bufferSizes.size(), 0);
    // Every value name whose storage was planned gets the placement (aliases included),
    // so the emitter can look any value up directly.
    for (const auto &[name, meta] : g.tensorValues) {
      auto it = itemOf.find(storageRoot(aliases, name));
      if (it == itemOf.end()) continue;
      plan.allocations.set(name, Allocation{d.items[it->second].memId, d.placement.offsets[it->second]});
    }
    method.plan = std::move(plan);
    details[methodName] = std::move(d);
  }
  program.stage = Stage::Planned;
  return details;
}

std::string planReport(const Program &program, const std::map<std::string, MethodPlanDetails> &details) {
  std::ostringstream os;
  for (const auto &[methodName, d] : details) {
    const Method *m = program.methods.find(methodName);
    os << "method " << methodName << ": algorithm " << d.placement.algorithm << ", " << d.items.size()
       << " planned tensors\n";
    for (size_t k = 1; k < d.placement.arenaSizes.size(); ++k) {
      uint64_t planned = d.placement.arenaSizes[k];
      uint64_t bound = k < d.lowerBounds.size() ? d.lowerBounds[k] : 0;
      os << "  arena " << k << ": planned " << planned << " bytes, lower bound " << bound << " bytes, ratio ";
      if (bound) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", double(planned) / double(bound));
        os << buf;
      } else {
        os << "n/a";
      }
      os << "\n";
    }
    std::vector<size_t> idx(d.items.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return d.items[a].size > d.items[b].size; });
    os << "  biggest tensors:\n";
    for (size_t i = 0; i < idx.size() && i < 5; ++i) {
      const PlanItem &it = d.items[idx[i]];
      os << "    " << it.name << ": " << it.size << " bytes at mem " << it.memId << "+" << d.placement.offsets[idx[i]]
         << ", live [" << it.start << ", " << it.end << "]\n";
    }
    (void)m;
  }
  return os.str();
}

} // namespace exir::plan
