//===- tests/Partition/PartitionFlowTest.cpp - Flow 3's two paths agree ---===//
//
// The incremental path of flow 3 must write exactly what the stepwise one
// (one pass over the method per partition, the plain transcription of
// upstream's fusion) writes: the same nodes in the same order, value tables in
// the same order, names, debug handles, delegates and report, or the same
// error. Checked on the seed models and the torch-export corpus with random
// partitions: cycle-free groups from proposePartitions (random supported
// nodes, both modes, size limits, lowering order shuffled, owned constants),
// where the incremental path must run, and arbitrary random tags, where it
// must step aside whenever a tag would close a cycle.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Partition/Fusion.h"
#include "Partition/Lowering.h"
#include "Serde/ProgramJson.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"

#include "PartitionTestUtil.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <random>

using namespace exir;
using namespace exir::partition;

namespace {

/// Hands out a fixed result (computed by the test for the method it is given).
class FixedPartitioner final : public Partitioner {
public:
  explicit FixedPartitioner(std::function<PartitionResult(const ExportedProgram &)> make) : make_(std::move(make)) {}
  std::string name() const override { return "FixedPartitioner"; }
  PartitionResult partition(const ExportedProgram &method) const override { return make_(method); }

private:
  std::function<PartitionResult(const ExportedProgram &)> make_;
};

DelegationSpec jsonBackend() {
  DelegationSpec spec;
  spec.backendId = "ExirSubgraphJson";
  return spec;
}

bool isEdgeOp(const Node &n) { return parseTarget(n.target).dialect == TargetDialect::Edge; }

/// Cycle-free partitions of randomly chosen edge nodes, in a shuffled lowering order.
PartitionResult proposedTags(const ExportedProgram &ep, std::mt19937 &rng) {
  const Graph &g = ep.graph;
  std::uniform_real_distribution<double> unit(0, 1);
  double density = std::vector<double>{0.2, 0.5, 0.8, 1.0}[rng() % 4];
  std::vector<bool> supported(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) supported[i] = isEdgeOp(g.nodes[i]) && unit(rng) < density;
  FusionOptions options;
  options.mode = rng() % 2 ? FusionMode::Upstream : FusionMode::Connected;
  options.maxPartitionSize = std::vector<size_t>{0, 0, 2, 5}[rng() % 4];
  auto partitions = proposePartitions(g, supported, options);
  std::shuffle(partitions.begin(), partitions.end(), rng);
  PartitionResult result;
  result.nodeTags.assign(g.nodes.size(), "");
  result.inputTags.assign(g.inputs.size(), "");
  for (const auto &p : partitions) {
    std::string tag = "tag" + std::to_string(p.id);
    for (size_t i : p.nodes) result.nodeTags[i] = tag;
    result.partitionTags.set(tag, jsonBackend());
  }
  if (rng() % 2) tagOwnedConstants(ep, result);
  return result;
}

/// Edge nodes tagged at random with one of a few tags: mostly not convex.
PartitionResult randomTags(const ExportedProgram &ep, std::mt19937 &rng) {
  const Graph &g = ep.graph;
  size_t tags = 1 + rng() % 4;
  PartitionResult result;
  result.nodeTags.assign(g.nodes.size(), "");
  result.inputTags.assign(g.inputs.size(), "");
  for (size_t t = 0; t < tags; ++t) result.partitionTags.set("t" + std::to_string(t), jsonBackend());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (isEdgeOp(g.nodes[i]) && rng() % 3 == 0) result.nodeTags[i] = "t" + std::to_string(rng() % tags);
  return result;
}

struct Outcome {
  Program program; // after an error, as far as the lowering got
  std::string error;
  LoweringReport report;
};

Outcome lower(const Program &input, const PartitionResult &tags, bool stepwise,
             const BackendRegistry *backends = &BackendRegistry::builtin()) {
  Outcome out;
  out.program = input;
  LoweringOptions options;
  options.stepwise = stepwise;
  options.backends = backends;
  FixedPartitioner partitioner([&](const ExportedProgram &) { return tags; });
  try {
    partitionProgram(out.program, partitioner, options, out.report);
  } catch (const Error &e) {
    out.error = e.message() + " @ " + e.location();
  }
  return out;
}

/// Lowers `program`'s forward with `tags` both ways; returns whether they succeeded.
bool checkPathsAgree(const Program &program, const PartitionResult &tags, const std::string &what,
                     const BackendRegistry *backends = &BackendRegistry::builtin()) {
  INFO(what);
  Outcome reference = lower(program, tags, true, backends);
  Outcome incremental = lower(program, tags, false, backends);
  REQUIRE(reference.report.incrementalMethods == 0);
  REQUIRE(incremental.error == reference.error);
  REQUIRE(incremental.report.delegatesCreated == reference.report.delegatesCreated);
  REQUIRE(incremental.report.warnings == reference.report.warnings);
  // The JSON first: where they differ, its diff says how. After an error
  // too: both leave the partitions before the failing one fused.
  REQUIRE(writeProgramJsonString(incremental.program, ".") == writeProgramJsonString(reference.program, "."));
  REQUIRE(incremental.program == reference.program);
  if (!reference.error.empty()) return false;
  // A tag graph with a cycle makes some step close one, so every lowering that
  // succeeds has an acyclic tag graph: the incremental path must have run
  // (unless there was nothing to fuse).
  bool anyTagged = std::any_of(tags.nodeTags.begin(), tags.nodeTags.end(), [](const auto &t) { return !t.empty(); });
  REQUIRE(incremental.report.incrementalMethods == (anyTagged ? 1u : 0u));
  verifyDelegatedProgram(incremental.program);
  return true;
}

/// ExirSubgraphJson, except that it refuses a subgraph holding the node
/// named `refused`: a step that fails after the partition was extracted.
class RefusingBackend final : public Backend {
public:
  explicit RefusingBackend(std::string refused) : refused_(std::move(refused)) {}
  std::string id() const override { return "Refusing"; }
  std::string summary() const override { return "test backend"; }
  PreprocessResult preprocess(const ExportedProgram &subgraph, const std::vector<CompileSpec> &specs) const override {
    for (const Node &n : subgraph.graph.nodes)
      if (n.name == refused_) throw Error("Refusing: cannot compile node " + refused_);
    return BackendRegistry::builtin().require("ExirSubgraphJson").preprocess(subgraph, specs);
  }

private:
  std::string refused_;
};

/// `program` with its node-defined tensors renamed getitem, getitem_1, ...
/// (last node first), as torch names the results of multi-output ops: the
/// names the delegate calls' results take are then freed by one fusion and
/// taken again by a later one.
Program withGetitemNames(Program program) {
  ExportedProgram &ep = program.methods.begin()->second.program;
  std::vector<std::string> defined;
  for (const Node &n : ep.graph.nodes)
    for (const auto &o : n.outputs) o.collectTensorNames(defined);
  std::unordered_map<std::string, std::string> renames;
  size_t k = 0;
  for (auto it = defined.rbegin(); it != defined.rend(); ++it, ++k)
    renames[*it] = k ? "getitem_" + std::to_string(k) : "getitem";
  // Existing getitem names move out of the way first.
  for (const auto &[name, meta] : ep.graph.tensorValues)
    if (!renames.count(name) && name.rfind("getitem", 0) == 0) renames[name] = "kept_" + name;
  edge::renameValues(ep, renames);
  return program;
}

std::vector<std::pair<std::string, Program>> suite() {
  std::vector<std::pair<std::string, Program>> out;
  for (const char *model : {"foo.pt2", "model_addmul.pt2", "simple_conv.pt2", "m_linear_clamp.pt2", "basic.pt2"})
    out.emplace_back(model, partitiontest::edgeProgramOf(model));
  std::vector<std::filesystem::path> corpus;
  for (const auto &entry : std::filesystem::directory_iterator(EXIR_SHARED_DIR "/corpus/torch-export"))
    if (entry.path().extension() == ".pt2") corpus.push_back(entry.path());
  std::sort(corpus.begin(), corpus.end());
  for (const auto &path : corpus) {
    Program p = readProgram(path.string());
    edge::toEdge(p, {});
    out.emplace_back(path.filename().string(), std::move(p));
  }
  size_t plain = out.size();
  for (size_t i = 0; i < plain; ++i) out.emplace_back(out[i].first + " (getitem names)", withGetitemNames(out[i].second));
  return out;
}

} // namespace

TEST_CASE("flow 3: the incremental path writes what the stepwise one does", "[lowering][partition-flow]") {
  auto programs = suite();
  REQUIRE(programs.size() >= 30);
  std::mt19937 rng(20261202);
  size_t proposedRuns = 0, proposedLowered = 0, randomRuns = 0, randomLowered = 0;
  for (const auto &[name, program] : programs) {
    const ExportedProgram &forward = program.methods.begin()->second.program;
    for (int trial = 0; trial < 12; ++trial) {
      PartitionResult tags = proposedTags(forward, rng);
      proposedLowered += checkPathsAgree(program, tags, name + ", proposed partitions, trial " + std::to_string(trial));
      ++proposedRuns;
    }
    for (int trial = 0; trial < 6; ++trial) {
      PartitionResult tags = randomTags(forward, rng);
      randomLowered += checkPathsAgree(program, tags, name + ", random tags, trial " + std::to_string(trial));
      ++randomRuns;
    }
  }
  // Enough of each kind lowered (proposed partitions fail where a partition
  // reads a symbolic size from outside, random tags where they close a cycle).
  CHECK(proposedLowered * 10 >= proposedRuns * 8);
  CHECK(randomLowered > 0);
  CHECK(randomLowered < randomRuns);
}

TEST_CASE("flow 3: a backend that fails leaves the same program on both paths", "[lowering][partition-flow]") {
  // The incremental path moves a partition's nodes into its subgraph before
  // the backend runs; when the backend fails they must be back in place, with
  // the partitions lowered before it fused, exactly as on the stepwise path.
  auto programs = suite();
  std::mt19937 rng(20261205);
  size_t failures = 0;
  for (const auto &[name, program] : programs) {
    const ExportedProgram &forward = program.methods.begin()->second.program;
    for (int trial = 0; trial < 4; ++trial) {
      PartitionResult tags = proposedTags(forward, rng);
      std::vector<std::string> order; // tags in lowering order
      for (const auto &[tag, spec] : tags.partitionTags) order.push_back(tag);
      if (order.size() < 2) continue;
      // Refuse the middle partition in lowering order, at its last node.
      const std::string &refusedTag = order[order.size() / 2];
      std::string refused;
      for (size_t i = 0; i < forward.graph.nodes.size(); ++i)
        if (tags.nodeTags[i] == refusedTag && forward.graph.nodes[i].name) refused = *forward.graph.nodes[i].name;
      if (refused.empty()) continue;
      // With a backend that accepts everything, these tags take the incremental path.
      Outcome accepted = lower(program, tags, false);
      if (!accepted.error.empty()) continue;
      REQUIRE(accepted.report.incrementalMethods == 1);
      BackendRegistry backends;
      backends.add(std::make_shared<RefusingBackend>(refused));
      for (auto &[tag, spec] : tags.partitionTags) spec.backendId = "Refusing";
      checkPathsAgree(program, tags, name + ", refusing " + refused + ", trial " + std::to_string(trial), &backends);
      Outcome incremental = lower(program, tags, false, &backends);
      if (incremental.error.find("Refusing: cannot compile node " + refused) == std::string::npos) continue;
      ++failures;
      // The refused partition's nodes are intact in the method.
      const Graph &after = incremental.program.methods.begin()->second.program.graph;
      auto it = std::find_if(after.nodes.begin(), after.nodes.end(), [&](const Node &n) { return n.name == refused; });
      REQUIRE(it != after.nodes.end());
      const Node &original = *std::find_if(forward.graph.nodes.begin(), forward.graph.nodes.end(),
                                           [&](const Node &n) { return n.name == refused; });
      CHECK(it->target == original.target);
      CHECK(it->metadata == original.metadata);
    }
  }
  CHECK(failures >= 20);
}

TEST_CASE("flow 3: a value defined twice sends the method down the stepwise path", "[lowering][partition-flow]") {
  // The incremental path keys every value by its one definer; with a second
  // definition of a name it must step aside (NodeDependencies::definedOnce),
  // and both paths then write the same thing.
  Program program = partitiontest::edgeProgramOf("model_addmul.pt2");
  Graph &g = program.methods.begin()->second.program.graph;
  REQUIRE(g.nodes.size() >= 2);
  std::string first = g.nodes[0].outputs[0].name;
  REQUIRE(!first.empty());
  g.nodes.back().outputs[0] = Argument::tensor(first);
  REQUIRE_FALSE(NodeDependencies::of(g).definedOnce);
  PartitionResult tags;
  tags.nodeTags.assign(g.nodes.size(), "");
  tags.inputTags.assign(g.inputs.size(), "");
  tags.nodeTags[0] = "t0";
  tags.partitionTags.set("t0", jsonBackend());
  Outcome reference = lower(program, tags, true);
  Outcome incremental = lower(program, tags, false);
  CHECK(incremental.report.incrementalMethods == 0);
  CHECK(incremental.error == reference.error);
  CHECK(writeProgramJsonString(incremental.program, ".") == writeProgramJsonString(reference.program, "."));
  CHECK(NodeDependencies::of(partitiontest::edgeProgramOf("model_addmul.pt2").methods.begin()->second.program.graph)
            .definedOnce);
}
