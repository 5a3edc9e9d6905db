//===- tools/exir-emit/exir-emit.cpp - planned program -> .pte ------------===//
#include "Emit/Emitter.h"
#include "Pte/PteDump.h"
#include "Pte/PteWriter.h"
#include "IR/Verifier.h"
#include "Plan/PlanPasses.h"
#include "Serde/ExportJson.h"
#include "Serde/ProgramReader.h"
#include "Support/FileIO.h"
#include "Support/Error.h"
#include "Tool/PassFlags.h"
#include "Tool/ToolMain.h"

#include <fnmatch.h>
#include <unistd.h>

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
               "  exir-emit model.plan.json -o model.pte --external-constants '*.weight' --ptd weights.ptd\n"
               "  exir-edge m.pt2 | exir-plan - | exir-emit - > m.pte              # stdout, never a terminal\n\n"
               "Every method is emitted; to keep only some, select them earlier with exir-edge --method NAME."};
  std::string input = "-", output;
  pte::WriteOptions options;
  bool dumpJson = false;
  emit::EmitOptions emitOptions;
  std::string externalFilter, ptdPath;
  app.add_option("input", input, "planned program JSON ('-' = stdin)");
  app.add_option("-o,--output", output,
                 "output .pte file (default '-' = stdout, which must not be a terminal; with --dump-json the .pte "
                 "is written only when -o is given)");
  app.add_option("--segment-alignment", options.segmentAlignment, "alignment of segments in the file (power of two)");
  app.add_option("--constant-alignment", options.constantAlignment, "alignment of tensors in the constant segment (power of two)");
  app.add_option("--delegate-alignment", options.delegateAlignment, "alignment of inline delegate data (power of two)");
  app.add_flag("--inline-delegates", options.inlineDelegates, "keep delegate blobs inside the flatbuffer");
  app.add_option("--threads", options.threads,
                 "threads that gather and write the weights (0 = one per core, at most 4; "
                 "the bytes are the same for any number)")
      ->check(CLI::Range(0u, 256u));
  app.add_flag("--emit-stacktraces", emitOptions.emitStacktraces,
               "fill each chain's stacktrace (one frame list per instruction) from the nodes' stack_trace, as "
               "upstream's emit_stacktrace=True");
  app.add_flag("--dump-json", dumpJson, "print the emitted program as JSON (flatc field names) to stdout");
  std::vector<std::string> opLibraries;
  addOpLibraryOption(app, opLibraries);
  CLI::Option *external =
      app.add_option("--external-constants", externalFilter,
                     "write constants whose FQN matches the glob (default: all) to a FlatTensor .ptd and mark them "
                     "EXTERNAL in the .pte")
          ->expected(0, 1);
  app.add_option("--ptd", ptdPath, "the .ptd file of --external-constants (default: the output with .ptd for .pte)");
  // Its steps are not passes over the program, so there is no --print-after.
  PassFlags passFlags(app,
                      {
                          {"verify", "check the planned program (stage verifier)"},
                          {"emit", "planned program -> .pte model: values, instructions, constants"},
                          {"write-ptd", "write the --external-constants .ptd"},
                          {"write-pte", "write the .pte (flatbuffer, then the segments)"},
                      },
                      /*printAfter=*/false);

  return runTool("exir-emit", app, argc, argv, [&] {
    if (passFlags.listPasses(std::cout)) return;
    PassTimer &timer = passFlags.timer();
    // Like every tool, the default output is stdout; a binary .pte is not sent to a terminal.
    if (output.empty() && !dumpJson) output = "-";
    if (output == "-" && dumpJson) throw UsageError("--dump-json prints to stdout: write the .pte with -o FILE.pte");
    if (output == "-" && ::isatty(1))
      throw UsageError("not writing a binary .pte to a terminal: use -o FILE.pte, redirect stdout, or --dump-json");
    if (external->count() == 0 && !ptdPath.empty())
      throw UsageError("--ptd is only meaningful with --external-constants");
    if (external->count() > 0 && ptdPath.empty() && (output.empty() || output == "-"))
      throw UsageError("--external-constants writing to stdout needs --ptd FILE");
    Program program;
    // Node metadata only feeds --emit-stacktraces: otherwise it is not read (~50 MB at 100k nodes).
    timer.time("(read input)", [&] {
      program = readProgramOfStage(input, {Stage::Planned}, ReadOptions{!emitOptions.emitStacktraces});
    });
    addOpLibraries(program, opLibraries);
    std::optional<emit::ExternalConstants> externals;
    if (external->count() > 0) {
      if (externalFilter.empty()) externalFilter = "*";
      if (ptdPath.empty()) {
        ptdPath = (output.size() > 4 && output.compare(output.size() - 4, 4, ".pte") == 0
                       ? output.substr(0, output.size() - 4)
                       : output) +
                  ".ptd";
      }
      externals.emplace();
      externals->matches = [&](const std::string &fqn) { return ::fnmatch(externalFilter.c_str(), fqn.c_str(), 0) == 0; };
    }
    pte::Program pte;
    // Verifying and emitting only read the program: they run side by side, and
    // nothing is written before both are done. A verifier error is the one
    // reported (the emit result, or its error, is dropped). The rows overlap
    // in wall time.
    attributeErrorsTo(input, [&] {
      timer.timeBeside(
          "verify",
          [&] {
            verifyProgram(program, Stage::Planned);
            // The memory plan is checked as strictly as exir-plan checks its own
            // output: overlaps, arena bounds, missing allocations, alignment.
            plan::verifyMemoryPlan(program);
          },
          "emit", [&] { pte = emit::emitProgram(program, externals ? &*externals : nullptr, emitOptions); });
    });
    // A progress bar on stderr while large weights are copied (shown only on a terminal).
    std::unique_ptr<ProgressBar> bar;
    options.progress = [&](uint64_t written, uint64_t total) {
      if (!bar) bar = std::make_unique<ProgressBar>("exir-emit: writing segments", total, size_t(64) << 20);
      bar->update(written);
    };
    // Zero runs become holes in file outputs: sparse weights stay sparse.
    options.sparse = !output.empty() && output != "-";
    // The .ptd first, then the .pte.
    if (externals) {
      ptd::File data;
      data.namedData = std::move(externals->entries);
      ptd::WriteOptions ptdOptions;
      ptdOptions.segmentAlignment = options.segmentAlignment;
      ptdOptions.sparse = ptdPath != "-";
      ptdOptions.threads = options.threads;
      ptdOptions.progress = [&](uint64_t written, uint64_t total) {
        if (!bar) bar = std::make_unique<ProgressBar>("exir-emit: writing " + ptdPath, total, size_t(64) << 20);
        bar->update(written);
      };
      timer.time("write-ptd", [&] {
        writeFileAtomically(ptdPath, [&](std::ostream &out) { ptd::writePtd(data, ptdOptions, out); });
      });
      bar.reset();
    }
    // runTool commits both files together: if the .pte fails, neither appears
    // (and an existing .ptd is left as it was).
    if (!output.empty())
      timer.time("write-pte", [&] {
        writeFileAtomically(output, [&](std::ostream &out) { pte::writePte(pte, options, out); });
      });
    if (dumpJson) pte::dumpPteJson(pte, std::cout);
    passFlags.report(std::cerr, "exir-emit");
    releaseAtExit(std::move(program));
    releaseAtExit(std::move(pte));
  });
}
