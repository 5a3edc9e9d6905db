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
               "  exir-plan - --alignment 64 --no-alloc-inputs < model.edge.json > model.plan.json"};
  std::string input = "-", output = "-", svgPath, tracePath;
  plan::PlanningOptions options;
  bool report = false, noAllocInputs = false, noAllocOutputs = false, keepViews = false, verifyOnly = false;
  std::vector<std::string> memIds;
  app.add_option("input", input, "Edge-dialect or delegated program JSON ('-' = stdin)");
  app.add_option("-o,--output", output, "output planned program JSON ('-' = stdout)");
  app.add_option("--algo", options.algorithm, "naive, greedy (upstream-compatible), greedy-by-size, best-fit, local-search, best")
      ->check(CLI::IsMember(plan::algorithmNames()));
  app.add_option("--alignment", options.alignment, "byte alignment of every planned tensor (power of two)");
  app.add_flag("--no-alloc-inputs", noAllocInputs, "leave graph inputs unplanned (the caller provides them)");
  app.add_flag("--no-alloc-outputs", noAllocOutputs, "leave graph outputs unplanned (the caller provides them)");
  app.add_flag("--share-mutable-buffers", options.shareMutableBuffers,
               "mutable buffers with the same name share one placement across methods (extra arena)");
  app.add_flag("--keep-view-copies", keepViews, "do not turn static view_copy ops into free memory.view aliases");
  app.add_option("--mem-id", memIds, "KIND=ID: place inputs|outputs|activations|buffers in arena ID (>= 1)");
  app.add_flag("--verify-only", verifyOnly, "check the memory plan of a planned program and exit (0 if it is sound)");
  app.add_flag("--report", report, "print the plan report (bytes, lower bound, ratio, biggest tensors) to stderr");
  app.add_option("--report-svg", svgPath, "draw the plan as SVG (time x address, one box per tensor)");
  app.add_option("--trace", tracePath, "write the plan in Chrome trace format (open in chrome://tracing or Perfetto)");

  return runTool("exir-plan", app, argc, argv, [&] {
    options.allocGraphInputs = !noAllocInputs;
    options.allocGraphOutputs = !noAllocOutputs;
    for (const auto &spec : memIds) {
      auto eq = spec.find('=');
      std::string kind = spec.substr(0, eq);
      if (eq == std::string::npos || (kind != "inputs" && kind != "outputs" && kind != "activations" && kind != "buffers"))
        throw Error("--mem-id expects KIND=ID with KIND one of inputs, outputs, activations, buffers; got '" + spec + "'");
      // Arenas 1..kMaxMemId: the plan holds one buffer size per arena up to the largest id.
      constexpr long long kMaxMemId = 1024;
      const char *digits = spec.c_str() + eq + 1;
      char *end = nullptr;
      errno = 0;
      long long id = std::strtoll(digits, &end, 10);
      if (end == digits || *end != '\0' || errno == ERANGE || id < 1 || id > kMaxMemId)
        throw Error("--mem-id arena ids are integers from 1 to " + std::to_string(kMaxMemId) + ", got '" + spec + "'");
      options.memIds[kind] = uint32_t(id);
    }
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
    Program program = readProgramOfStage(input, {Stage::Edge, Stage::Delegated});
    std::map<std::string, plan::MethodPlanDetails> details;
    attributeErrorsTo(input, [&] {
      // The dtype rules the program was lowered with (a user's edge.yaml) still hold.
      edge::verifyEdgeProgram(program, edge::DtypeRules::forProgram(program));
      partition::requireResolvedCalls(program);
      plan::removeGraphAsserts(program);
      plan::boundDataDependentSizes(program);
      plan::insertBufferWriteBack(program);
      // Views first, as upstream: they are recognised as functional view_copy ops.
      if (!keepViews) plan::viewsToAliases(program);
      plan::toOutVariant(program);
      details = plan::planProgram(program, options);
      verifyProgram(program, Stage::Planned);
    });
    writeProgram(program, output);
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
  });
}
