//===- tools/exir-plan/exir-plan.cpp - out variants + memory planning -----===//
//
// Reads an Edge (or delegated) program, converts ops to out variants, turns
// free views into aliases, plans memory and writes the planned program JSON;
// optionally a report, an SVG picture and a Chrome trace of the plan.
//
//===----------------------------------------------------------------------===//
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"
#include "IR/Verifier.h"
#include "Partition/Lowering.h"
#include "Plan/PlanPasses.h"
#include "Plan/PlanRender.h"
#include "Serde/ProgramReader.h"
#include "Support/FileIO.h"
#include "Support/Error.h"
#include "Tool/PassFlags.h"
#include "Tool/ToolMain.h"

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <map>

using namespace exir;

int main(int argc, char **argv) {
  CLI::App app{"exir-plan: out-variant conversion and memory planning (to_executorch before emission).\n\n"
               "Examples:\n"
               "  exir-plan model.edge.json -o model.plan.json --report\n"
               "  exir-plan model.edge.json --algo greedy --report-svg plan.svg --trace plan.trace.json\n"
               "  exir-plan - --alignment 64 --no-alloc-inputs < model.edge.json > model.plan.json\n\n"
               "Every method is planned; to keep only some, select them earlier with exir-edge --method NAME."};
  std::string input = "-", output = "-", svgPath, tracePath;
  plan::PlanningOptions options;
  bool noVerify = false, report = false, noAllocInputs = false, noAllocOutputs = false, keepViews = false, verifyOnly = false;
  std::vector<std::string> memIds, rewriteRules;
  app.add_option("input", input, "Edge-dialect or delegated program JSON ('-' = stdin)");
  app.add_option("-o,--output", output, "output planned program JSON (default '-' = stdout)");
  app.add_option("--algo", options.algorithm, "naive, greedy (upstream-compatible), greedy-by-size, best-fit, local-search, best")
      ->check(CLI::IsMember(plan::algorithmNames()));
  app.add_option("--alignment", options.alignment, "byte alignment of every planned tensor (power of two)");
  app.add_flag("--no-alloc-inputs", noAllocInputs, "leave graph inputs unplanned (the caller provides them)");
  app.add_flag("--no-alloc-outputs", noAllocOutputs, "leave graph outputs unplanned (the caller provides them)");
  app.add_flag("--share-mutable-buffers", options.shareMutableBuffers,
               "mutable buffers with the same name share one placement across methods (extra arena)");
  app.add_flag("--keep-view-copies", keepViews, "do not turn static view_copy ops into free memory.view aliases");
  app.add_option("--mem-id", memIds, "KIND=ID: place inputs|outputs|activations|buffers in arena ID (>= 1)");
  app.add_option("--rewrite", rewriteRules,
                 "apply rewrite rules (lib/Edge/REWRITE_RULES.md) before planning, like upstream's "
                 "ExecutorchBackendConfig(passes=[...]) (repeatable)");
  app.add_flag("--verify-only", verifyOnly, "check the memory plan of a planned program and exit (0 if it is sound)");
  addNoVerifyFlag(app, noVerify);
  std::vector<std::string> opLibraries;
  addOpLibraryOption(app, opLibraries);
  app.add_flag("--report", report, "print the plan report (bytes, lower bound, ratio, biggest tensors) to stderr");
  app.add_option("--report-svg", svgPath, "draw the plan as SVG (time x address, one box per tensor)");
  app.add_option("--trace", tracePath, "write the plan in Chrome trace format (open in chrome://tracing or Perfetto)");
  PassFlags passFlags(app, {
      {"remove-graph-asserts", "drop the runtime asserts torch.export records (RemoveGraphAssertsPass)"},
      {"bound-data-dependent-sizes", "upper bounds for data-dependent sizes (nonzero), so they can be planned"},
      {"insert-buffer-write-back", "copy mutated buffers back at the end of each method"},
      {"views-to-aliases", "static view_copy ops -> free memory.view aliases (off with --keep-view-copies)"},
      {"to-out-variant", "functional ops -> out variants with memory.alloc outputs"},
      {"plan-memory", "lifetimes and placement of every tensor (--algo); the program becomes stage planned"},
  });

  return runTool("exir-plan", app, argc, argv, [&] {
    applyNoVerifyFlag("exir-plan", noVerify);
    options.allocGraphInputs = !noAllocInputs;
    options.allocGraphOutputs = !noAllocOutputs;
    for (const auto &spec : memIds) {
      auto eq = spec.find('=');
      std::string kind = spec.substr(0, eq);
      if (eq == std::string::npos || (kind != "inputs" && kind != "outputs" && kind != "activations" && kind != "buffers"))
        throw UsageError("--mem-id expects KIND=ID with KIND one of inputs, outputs, activations, buffers; got '" + spec + "'");
      // Arenas 1..kMaxMemId: the plan holds one buffer size per arena up to the largest id.
      constexpr long long kMaxMemId = 1024;
      const char *digits = spec.c_str() + eq + 1;
      char *end = nullptr;
      errno = 0;
      long long id = std::strtoll(digits, &end, 10);
      if (end == digits || *end != '\0' || errno == ERANGE || id < 1 || id > kMaxMemId)
        throw UsageError("--mem-id arena ids are integers from 1 to " + std::to_string(kMaxMemId) + ", got '" + spec + "'");
      options.memIds[kind] = uint32_t(id);
    }
    if (passFlags.listPasses(std::cout)) return;
    plan::checkAlignment(options.alignment);
    if (verifyOnly) {
      Program planned = readProgramOfStage(input, {Stage::Planned});
      attributeErrorsTo(input, [&] {
        verifyProgram(planned, Stage::Planned);
        auto checked = plan::verifyMemoryPlan(planned);
        if (report) std::cerr << plan::planReport(planned, checked);
      });
      return;
    }
    Program program;
    PassTimer &timer = passFlags.timer();
    timer.time("(read input)", [&] { program = readProgramOfStage(input, {Stage::Edge, Stage::Delegated}); });
    addOpLibraries(program, opLibraries);
    std::map<std::string, plan::MethodPlanDetails> details;
    attributeErrorsTo(input, [&] {
      // The dtype rules the program was lowered with (a user's edge.yaml) still hold.
      std::optional<edge::DtypeRules> rules;
      passFlags.timer().time("(verify input)", [&] {
        rules = edge::DtypeRules::forProgram(program);
        edge::verifyEdgeProgram(program, *rules);
      });
      // The user's passes run first, on the Edge (or delegated) program, as upstream's do.
      for (const auto &path : rewriteRules) {
        edge::applyRewriteRules(program, path);
        edge::verifyEdgeProgram(program, *rules);
      }
      partition::requireResolvedCalls(program);
      // No verifier between these passes: the program is planned only at the end.
      PassManager pm(passFlags.managerOptions(), nullptr);
      auto add = [&](const char *name, std::function<void(Program &)> fn) {
        pm.add(std::make_unique<FunctionPass>(name, std::move(fn)));
      };
      add("remove-graph-asserts", plan::removeGraphAsserts);
      add("bound-data-dependent-sizes", plan::boundDataDependentSizes);
      add("insert-buffer-write-back", plan::insertBufferWriteBack);
      // Views first, as upstream: they are recognised as functional view_copy ops.
      if (!keepViews) add("views-to-aliases", plan::viewsToAliases);
      add("to-out-variant", plan::toOutVariant);
      add("plan-memory", [&](Program &p) { details = plan::planProgram(p, options); });
      pm.run(program);
    });
    // The planned program is checked while it is written (both only read it).
    verifyWhileWriting(
        timer, output, [&] { attributeErrorsTo(input, [&] { verifyProgram(program, Stage::Planned); }); },
        [&] { writeProgram(program, output); });
    passFlags.report(std::cerr, "exir-plan");
    if (report) std::cerr << plan::planReport(program, details);
    if (!svgPath.empty() || !tracePath.empty()) {
      std::string svg, trace;
      for (const auto &[name, d] : details) {
        if (!svgPath.empty()) svg += plan::renderSvg(d.items, d.placement, "method " + name);
        if (!tracePath.empty() && trace.empty()) trace = plan::renderChromeTrace(d.items, d.placement);
      }
      if (!svgPath.empty()) writeFileAtomically(svgPath, svg);
      if (!tracePath.empty()) writeFileAtomically(tracePath, trace);
    }
    releaseAtExit(std::move(program));
    releaseAtExit(std::move(details));
  });
}
