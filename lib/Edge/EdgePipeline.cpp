//===- Edge/EdgePipeline.cpp - to_edge: the pass pipeline and its verifier ===//
//
// The order is upstream's to_edge: decompose to core ATen, check core-ness,
// view ops -> _copy, scalars -> tensors, rename into the edge namespace,
// memory-format ops -> dim-order ops, debug handles; then user passes and
// rewrite rules; the edge verifier (structure + edge.yaml dtype rules) runs at
// the end and, with --verify-each, after every pass from the rename on.
//
//===----------------------------------------------------------------------===//
#include "Edge/DecompositionRules.h"
#include "Edge/EdgeUtil.h"
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"
#include "IR/Verifier.h"
#include "Ops/EdgeYaml.h"
#include "Ops/OperatorTable.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Hash.h"
#include "Support/Parallel.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace exir::edge {

namespace {
struct EdgePassDef {
  const char *name;
  void (*fn)(Program &);
  const char *summary;
  PassTrigger trigger;
};
constexpr EdgePassDef kEdgePasses[] = {
#define EDGE_PASS(name, fn, summary, trigger) {name, fn, summary, trigger},
#include "Edge/Passes.def"
};
} // namespace

const std::vector<PassInfo> &edgePassRegistry() {
  static const std::vector<PassInfo> registry = [] {
    std::vector<PassInfo> r;
    for (const EdgePassDef &def : kEdgePasses)
      r.push_back(PassInfo{def.name, def.summary, [&def] { return std::make_unique<FunctionPass>(def.name, def.fn); }});
    return r;
  }();
  return registry;
}

PassTrigger edgePassTrigger(const std::string &name) {
  for (const EdgePassDef &def : kEdgePasses)
    if (name == def.name) return def.trigger;
  return always();
}

namespace {
/// to_edge's passes, each skipped when its trigger matches no op of the
/// program. The census is taken when a trigger needs it and dropped after
/// every pass that ran (that pass may have added ops); on a 100k-node program
/// a skipped pass costs nothing where its own sweep cost 5-15 ms.
class GatedPasses {
public:
  std::unique_ptr<Pass> gate(std::string name, std::function<void(Program &)> fn, PassTrigger trigger) {
    return std::make_unique<FunctionPass>(std::move(name), [this, fn = std::move(fn), trigger](Program &p) {
      if (trigger.kind != PassTrigger::Kind::Always) {
        if (!census_) census_.emplace(p);
        if (!trigger.anyIn(*census_)) return; // nothing it rewrites: the program stays as it is
      }
      census_.reset();
      fn(p);
    });
  }

private:
  std::optional<TargetCensus> census_;
};
} // namespace

std::vector<std::string> toEdgePassOrder() {
  std::vector<std::string> order;
  for (const EdgePassDef &def : kEdgePasses) {
    if (std::string_view(def.name) == "replace-view-ops") order.emplace_back("check-aten-dialect");
    order.emplace_back(def.name);
    if (std::string_view(def.name) == "decompose-rules") order.emplace_back("functionalize");
  }
  return order;
}

std::vector<std::pair<std::string, std::string>> edgePipelinePasses() {
  std::vector<std::pair<std::string, std::string>> passes;
  for (const std::string &name : toEdgePassOrder()) {
    if (std::any_of(passes.begin(), passes.end(), [&](const auto &p) { return p.first == name; }))
      continue; // functionalize runs twice, it is listed once
    const char *summary = "refuse non-core ATen ops left after decomposition (--allow-non-core); pipeline only";
    for (const EdgePassDef &def : kEdgePasses)
      if (name == def.name) summary = def.summary;
    passes.emplace_back(name, summary);
  }
  passes.emplace_back("rewrite", "op-replacement rules of each --rewrite FILE; pipeline only");
  return passes;
}

/// The dtype rules on every edge-dialect node of `g` and of its cond
/// branches, located by JSON pointer; `isEdge` caches the parse of each target.
static void checkDtypeRules(const Graph &g, const std::string &graphLoc, const DtypeRules &rules,
                            StringMap<bool> &isEdge) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node &node = g.nodes[i];
    auto nodeLoc = [&] { return graphLoc + "/nodes/" + std::to_string(i); }; // built only when needed
    for (size_t a = 0; a < node.inputs.size(); ++a)
      if (node.inputs[a].arg.kind == ArgKind::Graph && node.inputs[a].arg.graph())
        checkDtypeRules(*node.inputs[a].arg.graph(), nodeLoc() + "/inputs/" + std::to_string(a) + "/arg/as_graph/graph",
                        rules, isEdge);
    auto [slot, unseen] = isEdge.try_emplace(node.target, false);
    if (unseen) slot->second = parseTarget(node.target).dialect == TargetDialect::Edge;
    if (!slot->second) continue;
    if (auto violation = rules.check(g, node)) {
      std::string frame = userFrame(node);
      throw Error("dtype constraint violated: " + *violation + (frame.empty() ? "" : " (at " + frame + ")"), {},
                  nodeLoc() + " (" + node.displayName() + ")");
    }
  }
}

/// Graphs with fewer nodes are checked on one thread: a second one costs
/// more than it saves there.
constexpr size_t kDtypeCheckBesideMinNodes = 4096;

void verifyEdgeProgram(const Program &program, const DtypeRules &rules) {
  auto checkDtypes = [&] {
    StringMap<bool> isEdge;
    for (const auto &[methodName, method] : program.methods)
      checkDtypeRules(method.program.graph, "/methods/" + methodName + "/graph_module/graph", rules, isEdge);
  };
  size_t nodes = 0;
  for (const auto &entry : program.methods) nodes += entry.second.program.graph.nodes.size();
  if (nodes < kDtypeCheckBesideMinNodes) {
    verifyProgram(program, program.stage);
    checkDtypes();
    return;
  }
  // Both only read the program (the dtype check reads missing values as
  // absent, so a malformed graph is safe to check), and the dtype rules are a
  // third to a half of the verifier's time on a 100k-node program. runBeside
  // rethrows the structural error first: the message a sequential check gives.
  runBeside([&] { verifyProgram(program, program.stage); }, checkDtypes);
}

void verifyEdgeMethod(const ExportedProgram &method, const std::string &methodName, const DtypeRules &rules) {
  verifyMethod(method, methodName, Stage::Edge);
  StringMap<bool> isEdge;
  checkDtypeRules(method.graph, "/methods/" + methodName + "/graph_module/graph", rules, isEdge);
}

/// A user's edge.yaml is recorded in the program, so later stages check with it too.
static void recordEdgeYaml(Program &program, const EdgeOptions &options) {
  if (options.edgeYamlPath.empty()) return;
  EdgeRulesRecord rec;
  rec.source = options.edgeYamlPath;
  rec.text = readFileOrStdin(options.edgeYamlPath);
  rec.sha256 = sha256Hex(rec.text);
  rec.replace = options.edgeYamlReplace;
  program.edgeRules = std::move(rec);
}

/// The passes the user asked for (--pass, then --rewrite), verified after each.
static void addUserPasses(PassManager &pm, const EdgeOptions &options);

/// Runs `work` under `name` in --time-passes' table: the verifiers at the
/// input and output and the loading of the dtype rules are not passes, but
/// on a large program they cost as much as one.
static void timed(const EdgeOptions &options, const char *name, const std::function<void()> &work) {
  if (options.passManager.timer) options.passManager.timer->time(name, work);
  else work();
}

void runUserPassesOnEdge(Program &program, const EdgeOptions &options) {
  if (program.stage != Stage::Edge)
    throw Error(std::string("--pass / --rewrite on an artifact need an Edge-dialect program, got stage '") +
                stageName(program.stage) + "'");
  recordEdgeYaml(program, options);
  std::optional<DtypeRules> loaded;
  timed(options, "(dtype rules)", [&] { loaded.emplace(DtypeRules::forProgram(program)); });
  const DtypeRules &rules = *loaded;
  timed(options, "(verifier)", [&] { verifyEdgeProgram(program, rules); });
  PassManager edge(options.passManager, [&](const Program &p) { verifyEdgeProgram(p, rules); });
  addUserPasses(edge, options);
  edge.run(program);
  if (options.verifyResult) timed(options, "(verifier)", [&] { verifyEdgeProgram(program, rules); });
}

static void addUserPasses(PassManager &pm, const EdgeOptions &options) {
  for (const auto &name : options.extraPasses) {
    bool found = false;
    for (const auto &info : edgePassRegistry())
      if (info.name == name) {
        pm.add(info.create());
        found = true;
        break;
      }
    if (!found) throw Error("unknown pass '" + name + "' (see --list-passes)");
  }
  for (const auto &path : options.rewriteRules)
    pm.add(std::make_unique<FunctionPass>("rewrite", [path](Program &p) { applyRewriteRules(p, path); }));
}

void toEdge(Program &program, const EdgeOptions &options) {
  if (program.stage != Stage::Aten)
    throw Error(std::string("to_edge expects an ATen-dialect program, got stage '") + stageName(program.stage) + "'");
  timed(options, "(verifier)", [&] { verifyProgram(program, Stage::Aten); });
  recordEdgeYaml(program, options);
  std::optional<DtypeRules> loaded;
  timed(options, "(dtype rules)", [&] { loaded.emplace(DtypeRules::forProgram(program)); });
  const DtypeRules &rules = *loaded;

  // Decompositions and the core-ATen check run on the ATen dialect; only the
  // structural verifier applies between them.
  auto structural = [](const Program &p) { verifyProgram(p, p.stage); };
  PassManager aten(options.passManager, structural);
  GatedPasses gated;
  auto addPass = [&](PassManager &pm, const std::string &name) {
    for (const EdgePassDef &def : kEdgePasses)
      if (name == def.name) {
        pm.add(gated.gate(def.name, def.fn, def.trigger));
        return;
      }
    throw Error("unknown pass '" + name + "' (see --list-passes)");
  };
  // --allow-non-core takes "aten::op" and "aten::op.default" alike.
  std::vector<std::string> allowNonCore;
  for (const auto &name : options.allowNonCore) allowNonCore.push_back(OperatorTable::normalizeName(name));
  // Rules are tried in order: the user's files (in the order given) before the builtin ones.
  auto decompositions = std::make_shared<DecompositionRules>();
  decompositions->prepend(DecompositionRules::builtin());
  for (auto it = options.decompositionFiles.rbegin(); it != options.decompositionFiles.rend(); ++it)
    decompositions->prepend(DecompositionRules::loadFile(*it));

  // The ATen-dialect passes go to `aten` (structural verifier only); from
  // to-edge-ops on, to `edge`, which checks the dtype rules too.
  PassManager edge(options.passManager, [&](const Program &p) { verifyEdgeProgram(p, rules); });
  PassManager *pm = &aten;
  for (const std::string &name : toEdgePassOrder()) {
    if (name == "to-edge-ops") {
      pm = &edge;
      edge.add(gated.gate(name, [](Program &p) {
        toEdgeOps(p);
        p.stage = Stage::Edge;
      }, always()));
    } else if (name == "decompose-rules") {
      aten.add(gated.gate(name, [decompositions, &allowNonCore](Program &p) {
        decomposeWithRules(p, *decompositions, allowNonCore);
      }, always()));
    } else if (name == "check-aten-dialect") {
      aten.add(gated.gate(name, [&](Program &p) { checkAtenDialect(p, allowNonCore); },
                          matching(needsAtenDialectCheck)));
    } else if (name == "fold-constants") {
      if (options.foldConstants != FoldConstantsMode::Never)
        edge.add(gated.gate(name, [mode = options.foldConstants](Program &p) { foldConstantsWith(p, mode); },
                            always()));
    } else if (name != "dim-order-ops" || !options.skipDimOrder) {
      addPass(*pm, name);
    }
  }
  aten.run(program);
  addUserPasses(edge, options); // last: no gated pass runs after them
  edge.run(program);
  if (options.verifyResult) timed(options, "(verifier)", [&] { verifyEdgeProgram(program, rules); });
}

} // namespace exir::edge
