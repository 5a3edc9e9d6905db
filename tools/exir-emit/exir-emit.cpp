//===- tools/exir-emit/exir-emit.cpp - planned program -> .pte ------------===//
#include "Emit/Emitter.h"
#include "Pte/PteDump.h"
#include "Pte/PteWriter.h"
#include "IR/Verifier.h"
#include "Plan/PlanPasses.h"
#include "Serde/ProgramReader.h"
#include "Support/FileIO.h"
#include "Support/Error.h"
#include "Tool/ToolMain.h"

#include <fnmatch.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

using namespace exir;

int main(int argc, char **argv) {
  CLI::App app{"exir-emit: serialize a planned program into an ExecuTorch .pte file.\n\n"
               "Examples:\n"
               "  exir-emit model.plan.json -o model.pte\n"
               "  exir-emit model.plan.json -o model.pte --segment-alignment 4096 --inline-delegates\n"
               "  exir-emit model.plan.json --dump-json | less\n"
               "  exir-emit model.plan.json -o model.pte --external-constants            # weights -> model.ptd\n"
               "  exir-emit model.plan.json -o model.pte --external-constants '*.weight' --ptd weights.ptd"};
  std::string input = "-", output;
  pte::WriteOptions options;
  bool dumpJson = false;
  std::string externalFilter, ptdPath;
  app.add_option("input", input, "planned program JSON ('-' = stdin)");
  app.add_option("-o,--output", output, "output .pte file ('-' = stdout)");
  app.add_option("--segment-alignment", options.segmentAlignment, "alignment of segments in the file (power of two)");
  app.add_option("--constant-alignment", options.constantAlignment, "alignment of tensors in the constant segment (power of two)");
  app.add_option("--delegate-alignment", options.delegateAlignment, "alignment of inline delegate data (power of two)");
  app.add_flag("--inline-delegates", options.inlineDelegates, "keep delegate blobs inside the flatbuffer");
  app.add_flag("--dump-json", dumpJson, "print the emitted program as JSON (flatc field names) to stdout");
  CLI::Option *external =
      app.add_option("--external-constants", externalFilter,
                     "write constants whose FQN matches the glob (default: all) to a FlatTensor .ptd and mark them "
                     "EXTERNAL in the .pte")
          ->expected(0, 1);
  app.add_option("--ptd", ptdPath, "the .ptd file of --external-constants (default: the output with .ptd for .pte)");

  return runTool("exir-emit", app, argc, argv, [&] {
    if (output.empty() && !dumpJson) throw Error("no output given: use -o FILE.pte, -o - or --dump-json");
    Program program = readProgramOfStage(input, {Stage::Planned});
    std::optional<emit::ExternalConstants> externals;
    if (external->count() > 0) {
      if (externalFilter.empty()) externalFilter = "*";
      if (ptdPath.empty()) {
        if (output.empty() || output == "-") throw Error("--external-constants writing to stdout needs --ptd FILE");
        ptdPath = (output.size() > 4 && output.compare(output.size() - 4, 4, ".pte") == 0
                       ? output.substr(0, output.size() - 4)
                       : output) +
                  ".ptd";
      }
      externals.emplace();
      externals->matches = [&](const std::string &fqn) { return ::fnmatch(externalFilter.c_str(), fqn.c_str(), 0) == 0; };
    } else if (!ptdPath.empty()) {
      throw Error("--ptd is only meaningful with --external-constants");
    }
    pte::Program pte;
    attributeErrorsTo(input, [&] {
      verifyProgram(program, Stage::Planned);
      // The memory plan is checked as strictly as exir-plan checks its own
      // output: overlaps, arena bounds, missing allocations, alignment.
      plan::verifyMemoryPlan(program);
      pte = emit::emitProgram(program, externals ? &*externals : nullptr);
    });
    // A progress bar on stderr while large weights are copied (shown only on a terminal).
    std::unique_ptr<ProgressBar> bar;
    options.progress = [&](uint64_t written, uint64_t total) {
      if (!bar) bar = std::make_unique<ProgressBar>("exir-emit: writing segments", total, size_t(64) << 20);
      bar->update(written);
    };
    // Zero runs become holes in file outputs: sparse weights stay sparse.
    options.sparse = !output.empty() && output != "-";
    // The .ptd first; if the .pte then fails, neither file is left behind.
    if (externals) {
      ptd::File data;
      data.namedData = std::move(externals->entries);
      ptd::WriteOptions ptdOptions;
      ptdOptions.segmentAlignment = options.segmentAlignment;
      ptdOptions.sparse = ptdPath != "-";
      ptdOptions.progress = [&](uint64_t written, uint64_t total) {
        if (!bar) bar = std::make_unique<ProgressBar>("exir-emit: writing " + ptdPath, total, size_t(64) << 20);
        bar->update(written);
      };
      writeFileAtomically(ptdPath, [&](std::ostream &out) { ptd::writePtd(data, ptdOptions, out); });
      bar.reset();
    }
    try {
      if (!output.empty())
        writeFileAtomically(output, [&](std::ostream &out) { pte::writePte(pte, options, out); });
    } catch (...) {
      std::error_code ignored;
      if (externals && ptdPath != "-") std::filesystem::remove(ptdPath, ignored);
      throw;
    }
    if (dumpJson) pte::dumpPteJson(pte, std::cout);
  });
}
