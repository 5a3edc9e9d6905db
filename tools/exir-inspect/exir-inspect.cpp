//===- tools/exir-inspect/exir-inspect.cpp - read any stage or .pte -------===//
#include "IR/GraphPrinter.h"
#include "Pte/BundledProgram.h"
#include "Pte/FlatTensor.h"
#include "Pte/PteDiff.h"
#include "Pte/PteDump.h"
#include "Pte/PteReader.h"
#include "Serde/JsonWriter.h"
#include "Serde/ProgramDiff.h"
#include "Serde/ProgramJson.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Tool/ToolMain.h"

#include <iostream>
#include <memory>
#include <optional>

using namespace exir;

namespace {

bool looksLikePte(std::string_view head) { return head.size() >= 8 && head.compare(4, 2, "ET") == 0; }

/// One input, whatever its format: exactly one member is set.
struct Input {
  std::optional<pte::Program> pte;
  std::optional<bpte::BundledProgram> bundled;
  std::optional<ptd::File> ptd;
  std::optional<Program> program;

  const char *kind() const {
    return pte ? "a .pte" : bundled ? "a .bpte" : ptd ? "a .ptd" : "a program";
  }
};

/// Reads `path` ("-" = stdin) after a look at its first bytes: .pte, .bpte,
/// .ptd (files only: its segments are read from the file), or any program.
Input readInput(const std::string &path) {
  Input in;
  if (path == "-") {
    auto bytes = std::make_shared<const std::string>(readFileOrStdin(path));
    if (ptd::looksLikePtd(*bytes))
      throw Error("a .ptd cannot be read from stdin (its segments are read from the file); pass its path",
                  "<stdin>");
    if (bpte::looksLikeBundledProgram(*bytes)) in.bundled = bpte::readBundledProgram(*bytes, "<stdin>");
    else if (looksLikePte(*bytes)) in.pte = pte::readPte(bytes, "<stdin>");
    else in.program = readProgramFromText(*bytes, path);
    return in;
  }
  std::string head = readFileRange(path, 0, std::min<uint64_t>(fileSize(path), 8));
  if (ptd::looksLikePtd(head)) in.ptd = ptd::readPtd(path);
  else if (bpte::looksLikeBundledProgram(head)) in.bundled = bpte::readBundledProgram(readFileOrStdin(path), path);
  else if (looksLikePte(head)) in.pte = pte::readPteFile(path); // moves, does not copy, the bytes
  else in.program = readProgram(path);
  return in;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"exir-inspect: show any stage's program (.pt2, torch.export JSON, program JSON), a .pte, a .bpte "
               "or a .ptd.\n\n"
               "Examples:\n"
               "  exir-inspect model.pt2                 # like print(exported_program)\n"
               "  exir-inspect model.edge.json --dot | dot -Tsvg > graph.svg\n"
               "  exir-inspect model.edge.json --json --pretty\n"
               "  exir-inspect model.pte                 # values, instructions, plans, constants, segments\n"
               "  exir-inspect model.pte --hash          # ... and the SHA-256 of every payload (reads them all)\n"
               "  exir-inspect model.pte --json          # full structure, flatc field names\n"
               "  exir-inspect model.pte --dot | dot -Tsvg > plan.svg  # instructions and tensor values\n"
               "  exir-emit model.plan.json -o - | exir-inspect -\n"
               "  exir-inspect model.bpte                # test suites (inputs, expected outputs), then the program\n"
               "  exir-inspect model.ptd                 # external data: header, segments, keys with layouts\n"
               "  exir-inspect model.pte --ptd model.ptd # check the EXTERNAL tensors against the .ptd\n"
               "  exir-inspect --diff a.pte b.pte\n"
               "  exir-inspect --diff a.edge.json b.edge.json\n\n"
               "--diff exits like diff(1): 0 when the two are the same, 1 when they differ (one line per\n"
               "difference on stdout), 2 on trouble (an input that does not read, two different kinds or\n"
               "stages, a usage error)."};
  std::vector<std::string> inputs;
  bool json = false, pretty = false, dot = false, diff = false, noStack = false;
  pte::TextDumpOptions textOptions;
  app.add_option("input", inputs, "program file, .pte, .bpte or .ptd ('-' = stdin, not for a .ptd)")->required();
  auto *jsonFlag = app.add_flag("--json", json, "write canonical JSON (program JSON, or the .pte structure)");
  app.add_flag("--pretty", pretty, "with --json: indent the JSON for reading (.pte JSON is always indented)")
      ->needs(jsonFlag);
  app.add_flag("--dot", dot,
               "write a Graphviz graph of the program (of a .pte or .bpte: its instructions and tensor values)");
  app.add_flag("--diff", diff,
               "differences between two .pte files, or two programs of the same stage (exit 0 same, 1 different)");
  app.add_flag("--hash", textOptions.hashes,
               "with a .pte or .bpte listing: print the SHA-256 of every constant, mutable-data, delegate and "
               "named-data payload (reads every payload byte; the default listing shows sizes only)");
  app.add_flag("--no-stack-traces", noStack, "leave out the '# File: ...' comment lines");
  std::string ptdPath;
  app.add_option("--ptd", ptdPath, "with a .pte: resolve its EXTERNAL tensors in this .ptd, as the runtime does (exit 1 if one is not)");

  int diffResult = 0;
  int rc = runTool("exir-inspect", app, argc, argv, [&] {
    if (textOptions.hashes && (json || dot || diff))
      throw UsageError("--hash adds hashes to the text listing; it does not combine with --json, --dot or --diff");
    if (diff) {
      if (inputs.size() != 2) throw UsageError("--diff takes exactly two inputs");
      if (inputs[0] == "-" && inputs[1] == "-") throw UsageError("--diff can read only one of its inputs from stdin");
      Input a = readInput(inputs[0]), b = readInput(inputs[1]);
      bool same = false;
      if (a.pte && b.pte) same = pte::diffPte(*a.pte, *b.pte, std::cout);
      else if (a.program && b.program) {
        if (a.program->stage != b.program->stage)
          throw Error(std::string("cannot compare stage '") + stageName(a.program->stage) + "' ('" + inputs[0] +
                      "') with stage '" + stageName(b.program->stage) + "' ('" + inputs[1] +
                      "'); --diff takes two programs of the same stage");
        same = diffPrograms(*a.program, *b.program, std::cout);
      }
      else
        throw Error(std::string("cannot compare ") + a.kind() + " ('" + inputs[0] + "') with " + b.kind() + " ('" +
                    inputs[1] + "'); --diff takes two .pte files or two programs of the same stage");
      if (!same) diffResult = 1;
      return;
    }
    if (inputs.size() != 1) throw UsageError("give one input file (or --diff A B)");
    if (!ptdPath.empty() && (json || dot || textOptions.hashes))
      throw UsageError("--ptd checks a .pte; it does not combine with --json / --dot / --hash");
    const std::string &path = inputs[0];
    Input in = readInput(path);
    if (!in.pte && !ptdPath.empty()) throw Error(std::string("--ptd checks a .pte; this is ") + in.kind(), path);
    if (textOptions.hashes && !in.pte && !in.bundled)
      throw Error(std::string("--hash lists the payloads of a .pte or .bpte; this is ") + in.kind(), path);
    if (in.ptd) {
      if (dot) throw Error("--dot draws a program or a .pte; a .ptd holds only data (use the text listing)", path);
      if (json) throw Error("a .ptd has only the text listing (no --json)", path);
      ptd::dumpPtdText(*in.ptd, std::cout);
      return;
    }
    if (in.bundled) {
      if (json) throw Error("a .bpte has only the text listing (no --json)", path);
      if (dot) pte::dumpPteDot(in.bundled->program, std::cout); // the embedded program
      else bpte::dumpBundledProgramText(*in.bundled, std::cout, textOptions);
      return;
    }
    if (in.pte) {
      if (!ptdPath.empty()) {
        ptd::File data = ptd::readPtd(ptdPath);
        size_t n = 0;
        attributeErrorsTo(path, [&] { n = ptd::checkExternalTensors(*in.pte, data); });
        std::cout << n << " external tensors resolved in " << ptdPath << "\n";
        return;
      }
      if (json) pte::dumpPteJson(*in.pte, std::cout);
      else if (dot) pte::dumpPteDot(*in.pte, std::cout);
      else pte::dumpPteText(*in.pte, std::cout, textOptions);
      return;
    }
    const Program &program = *in.program;
    if (json && pretty) std::cout << indentJson(writeProgramJsonString(program, ""));
    else if (json) writeProgram(program, "-");
    else if (dot) printDot(std::cout, program);
    else {
      PrintOptions opts;
      opts.stackTraces = !noStack;
      printProgram(std::cout, program, opts);
    }
  });
  // Under --diff every kind of trouble exits with 2, as diff(1) does.
  if (diff && rc == ExitBadInput) return ExitUsage;
  return rc != 0 ? rc : diffResult;
}
