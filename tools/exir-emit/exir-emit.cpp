//===- tools/exir-emit/exir-emit.cpp - planned program -> .pte ------------===//
#include "Emit/Emitter.h"
#include "Emit/PteDump.h"
#include "Emit/PteWriter.h"
#include "IR/Verifier.h"
#include "Serde/ProgramReader.h"
#include "Support/FileIO.h"
#include "Support/Error.h"
#include "Tool/ToolMain.h"

#include <iostream>
#include <memory>

using namespace exir;

int main(int argc, char **argv) {
  CLI::App app{"exir-emit: serialize a planned program into an ExecuTorch .pte file.\n\n"
               "Examples:\n"
               "  exir-emit model.plan.json -o model.pte\n"
               "  exir-emit model.plan.json -o model.pte --segment-alignment 4096 --inline-delegates\n"
               "  exir-emit model.plan.json --dump-json | less"};
  std::string input = "-", output;
  pte::WriteOptions options;
  bool dumpJson = false;
  app.add_option("input", input, "planned program JSON ('-' = stdin)");
  app.add_option("-o,--output", output, "output .pte file ('-' = stdout)");
  app.add_option("--segment-alignment", options.segmentAlignment, "alignment of segments in the file (power of two)");
  app.add_option("--constant-alignment", options.constantAlignment, "alignment of tensors in the constant segment (power of two)");
  app.add_option("--delegate-alignment", options.delegateAlignment, "alignment of inline delegate data (power of two)");
  app.add_flag("--inline-delegates", options.inlineDelegates, "keep delegate blobs inside the flatbuffer");
  app.add_flag("--dump-json", dumpJson, "print the emitted program as JSON (flatc field names) to stdout");

  return runTool("exir-emit", app, argc, argv, [&] {
    if (output.empty() && !dumpJson) throw Error("no output given: use -o FILE.pte, -o - or --dump-json");
    Program program = readProgramOfStage(input, {Stage::Planned});
    pte::Program pte;
    attributeErrorsTo(input, [&] {
      verifyProgram(program, Stage::Planned);
      pte = emit::emitProgram(program);
    });
    // A progress bar on stderr while large weights are copied (shown only on a terminal).
    std::unique_ptr<ProgressBar> bar;
    options.progress = [&](uint64_t written, uint64_t total) {
      if (!bar) bar = std::make_unique<ProgressBar>("exir-emit: writing segments", total, size_t(64) << 20);
      bar->update(written);
    };
    if (!output.empty())
      writeFileAtomically(output, [&](std::ostream &out) { pte::writePte(pte, options, out); });
    if (dumpJson) pte::dumpPteJson(pte, std::cout);
  });
}
