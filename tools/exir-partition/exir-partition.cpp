//===- tools/exir-partition/exir-partition.cpp - to_backend ---------------===//
//
// Reads an Edge (or already delegated) program and delegates parts of it to
// backends, in the three flows of the delegation seed page: a whole method
// (--whole-module), a previously lowered module the graph calls (--lowered),
// or what a partitioner tags (--partitioner). Writes a delegated program.
//
//===----------------------------------------------------------------------===//
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"
#include "Partition/Lowering.h"
#include "Partition/PartitionerRegistry.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"
#include "Tool/PassFlags.h"
#include "Tool/ToolMain.h"

#include <iostream>

using namespace exir;
using namespace exir::partition;

int main(int argc, char **argv) {
  CLI::App app{
      "exir-partition: delegate an Edge-dialect program to backends (to_backend).\n\n"
      "Examples:\n"
      "  exir-partition sin.edge.json --whole-module BackendWithCompilerDemo --compile-spec max_value=4 -o sin.lowered.json\n"
      "  exir-partition composed.edge.json --lowered lowered_module_0=sin.lowered.json -o composed.part.json\n"
      "  exir-partition foo.edge.json --partitioner AddMulPartitionerDemo -o foo.part.json\n"
      "  exir-partition m.edge.json --partitioner my_npu.yaml -o m.part.json\n"
      "  exir-partition m.edge.json --partitioner nodes:aten_mm_default,aten_add_tensor --backend BackendWithCompilerDemo\n\n"
      "Compile specs are KEY=VALUE; VALUE is an integer 0-255 stored as one byte (like upstream's bytes([4])),\n"
      "or u8:N, i32:N, i64:N (little-endian), str:TEXT, hex:HEX, b64:BASE64."};
  std::string input = "-", output = "-", wholeModule, partitionerSpec, backend;
  std::vector<std::string> compileSpecs, lowered, methods;
  uint64_t inlineLimit = 4096;
  bool noVerify = false, listBackends = false, listPartitioners = false, verbose = false, stepwise = false;
  app.add_option("input", input, "Edge-dialect or delegated program JSON ('-' = stdin)");
  app.add_option("-o,--output", output, "output delegated program JSON (default '-' = stdout)");
  app.add_option("--whole-module", wholeModule, "flow 1: lower each method whole to backend ID");
  app.add_option("--partitioner", partitionerSpec,
                 "flow 3: AddMulPartitionerDemo, a spec file FILE.yaml, or nodes:NAME,NAME;NAME");
  app.add_option("--backend", backend, "backend id for --partitioner (required by nodes:, overrides the others)");
  app.add_option("--compile-spec", compileSpecs, "KEY=VALUE compile spec (repeatable; replaces the partitioner's)");
  app.add_option("--lowered", lowered,
                 "flow 2: NAME=FILE binds lowered module NAME, as the graph's delegate calls name it, to the "
                 "artifact FILE written by --whole-module (repeatable)");
  app.add_option("--method", methods,
                 "NAME: work on method NAME only, as in every exir tool; here the other methods pass through "
                 "unchanged (repeatable; default all)");
  app.add_option("--blob-inline-limit", inlineLimit,
                 "blobs up to this many bytes stay inline in the JSON; larger ones go to OUTPUT.blobs")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--list-backends", listBackends, "list the registered backends and exit");
  app.add_flag("--list-partitioners", listPartitioners, "list the partitioners and exit");
  addNoVerifyFlag(app, noVerify);
  std::vector<std::string> opLibraries;
  addOpLibraryOption(app, opLibraries);
  app.add_flag("-v,--verbose", verbose, "print each delegate created on stderr");
  app.add_flag("--stepwise-fusion", stepwise,
               "flow 3: fuse the partitions one pass over the method each, the slow reference the default "
               "incremental fusion is checked against (same output)");
  PassFlags passFlags(app, {
      {"compose-lowered", "flow 2: bind each --lowered NAME=FILE module to the delegate calls that name it"},
      {"whole-module", "flow 1: lower each method whole to the --whole-module backend"},
      {"partition", "flow 3: delegate what the --partitioner tags, one delegate call per partition"},
  });

  return runTool("exir-partition", app, argc, argv, [&] {
    if (listBackends || listPartitioners) {
      if (listBackends)
        for (const auto &id : BackendRegistry::builtin().ids())
          std::cout << id << "  " << BackendRegistry::builtin().find(id)->summary() << "\n";
      if (listPartitioners)
        for (const auto &[name, summary] : PartitionerRegistry::builtin().list())
          std::cout << name << "  " << summary << "\n";
      return;
    }
    if (passFlags.listPasses(std::cout)) return;
    if (!wholeModule.empty() && !partitionerSpec.empty())
      throw UsageError("give either --whole-module or --partitioner, not both");
    if (wholeModule.empty() && partitionerSpec.empty() && lowered.empty())
      throw UsageError("nothing to do: give --whole-module ID, --partitioner SPEC or --lowered NAME=FILE");
    if (!backend.empty() && partitionerSpec.empty())
      throw UsageError("--backend goes with --partitioner (with --whole-module the backend is its argument)");
    if (!compileSpecs.empty() && wholeModule.empty() && partitionerSpec.empty())
      throw UsageError("--compile-spec goes with --whole-module or --partitioner");

    // Everything given on the command line is checked before the input is read.
    applyNoVerifyFlag("exir-partition", noVerify);
    LoweringOptions options;
    options.methods = methods;
    options.stepwise = stepwise;
    std::vector<CompileSpec> specs;
    for (const auto &text : compileSpecs) specs.push_back(parseCompileSpec(text));
    if (!compileSpecs.empty()) options.compileSpecOverride = specs;
    if (!backend.empty()) {
      options.backends->require(backend);
      options.backendOverride = backend;
    }
    if (!wholeModule.empty()) options.backends->require(wholeModule);
    std::unique_ptr<Partitioner> partitioner;
    if (!partitionerSpec.empty()) partitioner = PartitionerRegistry::builtin().create(partitionerSpec, backend);
    // Inputs are verified like exir-plan's (delegate calls may still wait for --lowered).
    auto verifyInput = [](const Program &p) { edge::verifyEdgeProgram(p, edge::DtypeRules::forProgram(p)); };
    std::vector<std::pair<std::string, Program>> modules;
    for (const auto &binding : lowered) {
      auto eq = binding.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == binding.size())
        throw UsageError("--lowered expects NAME=FILE, got '" + binding + "'");
      std::string file = binding.substr(eq + 1);
      modules.emplace_back(binding.substr(0, eq), readProgramOfStage(file, {Stage::Delegated}));
      attributeErrorsTo(file, [&] { verifyInput(modules.back().second); });
    }

    Program program;
    passFlags.timer().time("(read input)",
                           [&] { program = readProgramOfStage(input, {Stage::Edge, Stage::Delegated}); });
    addOpLibraries(program, opLibraries);
    LoweringReport report;
    attributeErrorsTo(input, [&] {
      passFlags.timer().time("(verify input)", [&] { verifyInput(program); });
      // verifyDelegatedProgram checks the result once, at the end.
      PassManager pm(passFlags.managerOptions(), nullptr);
      if (!modules.empty())
        pm.add(std::make_unique<FunctionPass>("compose-lowered", [&](Program &p) {
          for (const auto &[name, module] : modules) composeLoweredModule(p, name, module, report);
        }));
      if (!wholeModule.empty())
        pm.add(std::make_unique<FunctionPass>(
            "whole-module", [&](Program &p) { lowerWholeProgram(p, wholeModule, specs, options, report); }));
      if (partitioner)
        pm.add(std::make_unique<FunctionPass>(
            "partition", [&](Program &p) { partitionProgram(p, *partitioner, options, report); }));
      pm.run(program);
    });
    for (const auto &w : report.warnings) std::cerr << "exir-partition: warning: " << w << "\n";
    if (verbose)
      for (const auto &line : report.delegatesCreated) std::cerr << "exir-partition: " << line << "\n";
    if (partitioner && report.delegatesCreated.empty())
      std::cerr << "exir-partition: warning: " << partitioner->name() << " found nothing to delegate\n";
    // storeDelegateBlobs only changes the blobs' references (Delegate::processed),
    // which the verifier never reads.
    verifyWhileWriting(
        passFlags.timer(), output, [&] { attributeErrorsTo(input, [&] { verifyDelegatedProgram(program); }); },
        [&] {
          storeDelegateBlobs(program, output, inlineLimit);
          writeProgram(program, output);
        });
    passFlags.report(std::cerr, "exir-partition");
    releaseAtExit(std::move(program));
  });
}
