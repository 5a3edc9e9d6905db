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

// Offsets, arena sizes and the .pte's int64 buffer sizes must all stay below this.
constexpr uint64_t kMaxPlannedBytes = uint64_t(INT64_MAX);

// Bytes of `name` at the upper bounds of its dims; refuses sizes that overflow.
uint64_t byteSize(const std::string &name, const TensorMeta &meta, const ExportedProgram &ep) {
  uint64_t n = elementSize(meta.dtype);
  std::string shape;
  bool overflow = false;
  for (const auto &s : meta.sizes) {
    int64_t bound = std::max<int64_t>(upperBound(s, ep), 0);
    shape += (shape.empty() ? "" : ", ") + std::to_string(bound);
    overflow |= __builtin_mul_overflow(n, uint64_t(bound), &n);
  }
  if (overflow || n > kMaxPlannedBytes)
    throw Error("tensor '" + name + "' cannot be planned: [" + shape + "] elements (dynamic dims at their upper bounds) of " +
                std::to_string(elementSize(meta.dtype)) + " bytes exceed 2^63-1 bytes");
  return n;
}

// The planned tensors of one method together must fit, so no placement can overflow.
void checkTotalSize(const std::vector<PlanItem> &items, uint64_t alignment, const std::string &methodName) {
  uint64_t total = 0;
  for (const auto &item : items) {
    uint64_t aligned = item.size + (alignment - 1);
    if (aligned < item.size || __builtin_add_overflow(total, aligned, &total) || total > kMaxPlannedBytes)
      throw Error("the planned tensors of method '" + methodName + "' need more than 2^63-1 bytes together (at '" +
                      item.name + "'; bound the dynamic dims lower)",
                  {}, "/methods/" + methodName);
  }
}

uint32_t memIdFor(const PlanningOptions &options, const char *kind) {
  auto it = options.memIds.find(kind);
  return it == options.memIds.end() ? 1 : it->second;
}

} // namespace

namespace {

/// What planning needs to know about a method's storage: which values share
/// storage, what each storage is, and when it lives (pte-format.md §5.3).
struct StorageAnalysis {
  std::unordered_map<std::string, std::string> aliases;
  std::unordered_set<std::string> constants, userInputs, mutableBuffers, graphOutputs;
  std::unordered_map<std::string, std::string> bufferFqn; // mutable buffer placeholder -> FQN
  std::vector<std::string> order; // storage roots, first appearance first
  std::unordered_map<std::string, std::pair<uint32_t, uint32_t>> life;
};

StorageAnalysis analyzeStorage(const ExportedProgram &ep) {
  const Graph &g = ep.graph;
  StorageAnalysis a;
  a.aliases = storageAliases(g);
  std::unordered_set<std::string> mutatedBufferNames;
  for (const auto &spec : ep.signature.outputSpecs)
    if (spec.kind == OutputKind::BufferMutation) mutatedBufferNames.insert(spec.target);
  for (const auto &spec : ep.signature.inputSpecs) {
    if (spec.arg.kind != ArgKind::Tensor) continue;
    switch (spec.kind) {
    case InputKind::UserInput: a.userInputs.insert(spec.arg.name); break;
    case InputKind::Buffer:
      if (mutatedBufferNames.count(spec.target)) {
        a.mutableBuffers.insert(spec.arg.name);
        a.bufferFqn[spec.arg.name] = spec.target;
      } else {
        a.constants.insert(spec.arg.name);
      }
      break;
    default: a.constants.insert(spec.arg.name); break;
    }
  }
  for (const auto &o : g.outputs) {
    std::vector<std::string> names;
    o.collectTensorNames(names);
    for (auto &n : names) a.graphOutputs.insert(storageRoot(a.aliases, n));
  }
  auto touch = [&](const std::string &name, uint32_t t) {
    std::string root = storageRoot(a.aliases, name);
    auto it = a.life.find(root);
    if (it == a.life.end()) {
      a.life[root] = {t, t};
      a.order.push_back(root);
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
    std::vector<std::string> names;
    for (const auto &in : node.inputs) in.arg.collectTensorNames(names);
    for (const auto &o : node.outputs) o.collectTensorNames(names);
    for (auto &n : names) touch(n, t);
    ++t;
  }
  // The output node is a use; mutable buffers persist across runs, so they never die.
  for (const auto &name : a.graphOutputs) touch(name, t);
  for (const auto &name : a.mutableBuffers) a.life[storageRoot(a.aliases, name)].second = t;
  return a;
}

} // namespace

std::map<std::string, MethodPlanDetails> planProgram(Program &program, const PlanningOptions &options) {
  checkAlignment(options.alignment);
  if (options.shareMutableBuffers)
    for (const auto &[kind, id] : options.memIds)
      if (id != 1)
        throw Error("sharing mutable buffers across methods needs every other tensor in arena 1 (--mem-id " + kind +
                    "=" + std::to_string(id) + " given)");
  std::map<std::string, MethodPlanDetails> details;
  // FQN -> (bytes, placement) of the shared buffers, in first-seen order.
  std::vector<std::pair<std::string, uint64_t>> shared;
  std::map<std::string, size_t> sharedIndex;
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    const Graph &g = ep.graph;
    StorageAnalysis a = analyzeStorage(ep);
    if (options.shareMutableBuffers)
      for (const auto &root : a.order) {
        if (!a.mutableBuffers.count(root)) continue;
        const std::string &fqn = a.bufferFqn.at(root);
        uint64_t bytes = byteSize(root, *g.tensorValues.find(root), ep);
        auto it = sharedIndex.find(fqn);
        if (it == sharedIndex.end()) {
          sharedIndex[fqn] = shared.size();
          shared.emplace_back(fqn, bytes);
        } else if (shared[it->second].second != bytes) {
          throw Error("mutable buffer '" + fqn + "' has different sizes in different methods (" +
                          std::to_string(shared[it->second].second) + " and " + std::to_string(bytes) + " bytes)",
                      {}, "/methods/" + methodName);
        }
      }

    MethodPlanDetails d;
    std::unordered_map<std::string, size_t> itemOf;
    for (const auto &root : a.order) {
      if (a.constants.count(root)) continue;
      const TensorMeta *meta = g.tensorValues.find(root);
      if (!meta) continue; // sym values, custom objects
      bool isInput = a.userInputs.count(root) != 0;
      bool isBuffer = a.mutableBuffers.count(root) != 0;
      bool isOutput = a.graphOutputs.count(root) != 0;
      if (isInput && !options.allocGraphInputs) continue;
      if (isBuffer && (!options.allocMutableBuffers || options.shareMutableBuffers)) continue;
      if (isOutput && !isInput && !options.allocGraphOutputs) continue;
      const char *kind = isBuffer ? "buffers" : isInput ? "inputs" : isOutput ? "outputs" : "activations";
      PlanItem item;
      item.name = root;
      item.size = byteSize(root, *meta, ep);
      item.start = a.life[root].first;
      item.end = a.life[root].second;
      item.memId = memIdFor(options, kind);
      itemOf[root] = d.items.size();
      d.items.push_back(item);
    }

    checkTotalSize(d.items, options.alignment, methodName);
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
      auto it = itemOf.find(storageRoot(a.aliases, name));
      if (it == itemOf.end()) continue;
      plan.allocations.set(name, Allocation{d.items[it->second].memId, d.placement.offsets[it->second]});
    }
    method.plan = std::move(plan);
    details[methodName] = std::move(d);
  }
  if (options.shareMutableBuffers && !shared.empty()) {
    // One arena after the others, the buffers back to back: they live forever.
    std::vector<uint64_t> offsets;
    uint64_t size = 0;
    for (const auto &[fqn, bytes] : shared) {
      offsets.push_back(size);
      size += alignUp(bytes, options.alignment);
    }
    for (auto &[methodName, method] : program.methods) {
      MemoryPlan &plan = *method.plan;
      uint32_t arena = uint32_t(plan.bufferSizes.size());
      plan.bufferSizes.push_back(size);
      plan.lowerBounds.resize(plan.bufferSizes.size() - 1, 0);
      plan.lowerBounds.push_back(size);
      StorageAnalysis a = analyzeStorage(method.program);
      for (const auto &[name, meta] : method.program.graph.tensorValues) {
        std::string root = storageRoot(a.aliases, name);
        if (!a.mutableBuffers.count(root)) continue;
        plan.allocations.set(name, Allocation{arena, offsets[sharedIndex.at(a.bufferFqn.at(root))]});
      }
    }
  }
  program.stage = Stage::Planned;
  return details;
}

std::map<std::string, MethodPlanDetails> verifyMemoryPlan(const Program &program) {
  std::map<std::string, MethodPlanDetails> details;
  for (const auto &[methodName, method] : program.methods) {
    if (!method.plan) throw Error("method has no memory plan", {}, "/memory_plans/" + methodName);
    const MemoryPlan &plan = *method.plan;
    const ExportedProgram &ep = method.program;
    StorageAnalysis a = analyzeStorage(ep);
    MethodPlanDetails d;
    d.placement.algorithm = plan.algorithm;
    d.placement.arenaSizes = plan.bufferSizes;
    for (const auto &root : a.order) {
      const Allocation *alloc = plan.allocations.find(root);
      const TensorMeta *meta = ep.graph.tensorValues.find(root);
      if (!meta) continue;
      std::string where = "/memory_plans/" + methodName + "/allocations/" + root;
      if (a.constants.count(root)) {
        if (alloc) throw Error("constant '" + root + "' must not be memory-planned", {}, where);
        continue;
      }
      if (!alloc) {
        // Only graph inputs/outputs may be left to the caller; allocs must be planned.
        bool boundary = a.userInputs.count(root) || a.graphOutputs.count(root);
        if (!boundary) throw Error("tensor '" + root + "' is produced inside the graph but has no allocation", {}, where);
        continue;
      }
      // Every alias of a storage must sit where the storage sits.
      for (const auto &[name, target] : a.aliases)
        if (storageRoot(a.aliases, name) == root)
          if (const Allocation *other = plan.allocations.find(name))
            if (!(*other == *alloc))
              throw Error("'" + name + "' shares storage with '" + root + "' but is placed elsewhere", {},
                          "/memory_plans/" + methodName + "/allocations/" + name);
      PlanItem item;
      item.name = root;
      item.size = byteSize(root, *meta, ep);
      item.start = a.life[root].first;
      item.end = a.life[root].second;
      item.memId = alloc->memId;
      d.items.push_back(item);
      d.placement.offsets.push_back(alloc->offset);
    }
    try {
      verifyPlacement(d.items, d.placement, plan.alignment);
    } catch (const Error &e) {
      // The placement verifier names the item; place it in the artifact's JSON.
      throw Error(e.message(), e.file(),
                  "/memory_plans/" + methodName + (e.location().empty() ? "" : "/allocations/" + e.location()));
    }
    d.lowerBounds = lowerBounds(d.items, plan.alignment);
    details[methodName] = std::move(d);
  }
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
