//===- tools/exir-inspect/exir-inspect.cpp - read any stage or .pte -------===//
#include "Pte/FlatTensor.h"
#include "Pte/PteDiff.h"
#include "Pte/PteDump.h"
#include "Pte/PteReader.h"
#include "IR/GraphPrinter.h"
#include "Serde/ProgramReader.h"
#include "Support/FileIO.h"
#include "Support/Error.h"
#include "Tool/ToolMain.h"

#include <iostream>

using namespace exir;

static bool looksLikePte(const std::string &bytes) { return bytes.size() >= 8 && bytes.compare(4, 2, "ET") == 0; }

int main(int argc, char **argv) {
  CLI::App app{"exir-inspect: show any stage's program (.pt2, torch.export JSON, program JSON) or a .pte.\n\n"
               "Examples:\n"
               "  exir-inspect model.pt2                 # like print(exported_program)\n"
               "  exir-inspect model.edge.json --dot | dot -Tsvg > graph.svg\n"
               "  exir-inspect model.pte                 # values, instructions, plans, constants, segments\n"
               "  exir-inspect model.pte --json          # full structure, flatc field names\n"
               "  exir-inspect model.ptd                 # external data: header, segments, keys with layouts\n"
               "  exir-inspect model.pte --ptd model.ptd # check the EXTERNAL tensors against the .ptd\n"
               "  exir-inspect --diff a.pte b.pte"};
  std::vector<std::string> inputs;
  bool json = false, dot = false, diff = false, noStack = false;
  app.add_option("input", inputs, "program file or .pte ('-' = stdin)")->required();
  app.add_flag("--json", json, "write canonical JSON (program JSON, or the .pte structure)");
  app.add_flag("--dot", dot, "write a Graphviz graph of the program");
  app.add_flag("--diff", diff, "structural differences between two .pte files (exit 1 if they differ)");
  app.add_flag("--no-stack-traces", noStack, "leave out the '# File: ...' comment lines");
  std::string ptdPath;
  app.add_option("--ptd", ptdPath, "with a .pte: resolve its EXTERNAL tensors in this .ptd, as the runtime does (exit 1 if one is not)");

  int diffResult = 0;
  int rc = runTool("exir-inspect", app, argc, argv, [&] {
    if (diff) {
      if (inputs.size() != 2) throw Error("--diff takes exactly two .pte files");
      pte::Program a = pte::readPteFile(inputs[0]); // no copy of the bytes
      pte::Program b = pte::readPteFile(inputs[1]);
      if (!pte::diffPte(a, b, std::cout)) diffResult = 1;
      return;
    }
    if (inputs.size() != 1) throw Error("give one input file (or --diff A B)");
    if (!ptdPath.empty() && (json || dot)) throw Error("--ptd checks a .pte; it does not combine with --json / --dot");
    const std::string &path = inputs[0];
    if (path != "-") {
      std::string head = readFileRange(path, 0, std::min<uint64_t>(fileSize(path), 8));
      if (ptd::looksLikePtd(head)) {
        if (json || dot) throw Error("a .ptd has only the text listing (no --json / --dot)");
        ptd::dumpPtdText(ptd::readPtd(path), std::cout);
        return;
      }
      if (looksLikePte(head)) {
        pte::Program p = pte::readPteFile(path); // moves, does not copy, the bytes
        if (!ptdPath.empty()) {
          ptd::File data = ptd::readPtd(ptdPath);
          size_t n = 0;
          attributeErrorsTo(path, [&] { n = ptd::checkExternalTensors(p, data); });
          std::cout << n << " external tensors resolved in " << ptdPath << "\n";
          return;
        }
        if (json) pte::dumpPteJson(p, std::cout);
        else pte::dumpPteText(p, std::cout);
        return;
      }
    }
    Program program = readProgram(path);
    if (json) writeProgram(program, "-");
    else if (dot) printDot(std::cout, program);
    else {
      PrintOptions opts;
      opts.stackTraces = !noStack;
      printProgram(std::cout, program, opts);
    }
  });
  return rc != 0 ? rc : diffResult;
}
