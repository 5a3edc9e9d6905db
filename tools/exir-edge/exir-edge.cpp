//===- tools/exir-edge/exir-edge.cpp - to_edge ----------------------------===//
//
// Reads an ATen-dialect program (torch.export JSON, .pt2, or our artifact),
// lowers it to the Edge dialect and writes the program JSON.
//
//===----------------------------------------------------------------------===//
#include "Edge/Passes.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"
#include "Tool/ToolMain.h"

#include <cstdlib>
#include <iostream>

using namespace exir;

/// "128", "0.5", "true", "text" -> constant values, split on commas.
static std::vector<ConstantValue> parseConstantValues(const std::string &text) {
  std::vector<ConstantValue> values;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    ConstantValue c;
    char *end = nullptr;
    long long asInt = std::strtoll(item.c_str(), &end, 10);
    if (!item.empty() && *end == '\0') {
      c.kind = ConstantValue::Kind::Int;
      c.intValue = asInt;
    } else if (double asFloat = std::strtod(item.c_str(), &end); !item.empty() && *end == '\0') {
      c.kind = ConstantValue::Kind::Float;
      c.floatValue = asFloat;
    } else if (item == "true" || item == "false") {
      c.kind = ConstantValue::Kind::Bool;
      c.intValue = item == "true";
    } else {
      c.kind = ConstantValue::Kind::String;
      c.stringValue = item;
    }
    values.push_back(c);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return values;
}

int main(int argc, char **argv) {
  CLI::App app{"exir-edge: lower a torch.export program (ATen dialect) to the Edge dialect.\n\n"
               "Examples:\n"
               "  exir-edge model.pt2 -o model.edge.json\n"
               "  exir-edge --method encode=enc.pt2 --method decode=dec.pt2 -o codec.edge.json\n"
               "  exir-edge model.json --rewrite relu_to_sigmoid.yaml --print-after all\n"
               "  exir-edge model.pt2 --edge-yaml my_edge.yaml -o - | exir-plan - -o model.plan.json"};
  std::string input, output = "-", weights;
  std::vector<std::string> methods, constantMethods;
  edge::EdgeOptions options;
  bool listPasses = false, noVerify = false, verifyEach = false;
  app.add_option("input", input, "ATen-dialect program: .pt2, torch.export JSON or program JSON ('-' = stdin)");
  app.add_option("-o,--output", output, "output program JSON ('-' = stdout)");
  app.add_option("--method", methods, "NAME=FILE: add a method from FILE (repeatable; several methods in one program)");
  app.add_option("--constant-method", constantMethods,
                 "NAME=VALUE[,VALUE...]: a method that returns constants (int, float, true/false, or text)");
  app.add_option("--weights", weights,
                 "FILE.safetensors or FILE.pt2: constant data by FQN (for a torch.export JSON, which has none)");
  app.add_option("--edge-yaml", options.edgeYamlPath,
                 "dtype rules in edge.yaml format for the ops the file lists (the project's edge_ops/edge.yaml covers "
                 "the rest); recorded in the output, so every later tool checks with them");
  app.add_flag("--edge-yaml-replace", options.edgeYamlReplace, "--edge-yaml's rules alone: ops the file does not list go unchecked");
  app.add_option("--allow-non-core", options.allowNonCore, "keep this non-core op (e.g. aten::foo.default) instead of failing");
  app.add_option("--pass", options.extraPasses, "run a built-in pass after to_edge (see --list-passes)");
  app.add_option("--rewrite", options.rewriteRules, "apply op-replacement rules from a YAML file");
  app.add_option("--decompositions", options.decompositionFiles,
                 "extra decomposition rules (YAML, see lib/Edge/DECOMPOSITIONS.md), tried before the builtin ones");
  app.add_flag("--skip-dim-order", options.skipDimOrder, "keep _to_copy/clone instead of dim_order_ops");
  app.add_option("--print-after", options.passManager.printAfter, "print the program after PASS (or 'all') to stderr");
  app.add_flag("--time-passes", options.passManager.timePasses, "report time per pass on stderr");
  app.add_flag("--list-passes", listPasses, "list the built-in passes and exit");
  CLI::Option *verifyEachFlag = app.add_flag("--verify-each", verifyEach,
               "also verify after every pass, naming the pass that broke the program (the default verifies the "
               "input and the result only)");
  app.add_flag("--no-verify-each", noVerify, "verify only the input and the result (the default)")
      ->excludes(verifyEachFlag);

  return runTool("exir-edge", app, argc, argv, [&] {
    if (listPasses) {
      for (const auto &p : edge::edgePassRegistry()) std::cout << p.name << "  " << p.summary << "\n";
      return;
    }
    options.passManager.verifyEach = verifyEach;
    Program program;
    if (methods.empty()) {
      if (input.empty()) throw Error("no input given (a file, '-', or --method NAME=FILE)");
      program = readProgramOfStage(input, {Stage::Aten});
    } else {
      if (!input.empty()) throw Error("give either an input file or --method options, not both");
      for (const auto &spec : methods) {
        auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0) throw Error("--method expects NAME=FILE, got '" + spec + "'");
        std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
        Program part = readProgramOfStage(file, {Stage::Aten});
        if (part.methods.size() != 1) throw Error("expected one method in the file", file);
        if (program.methods.contains(name)) throw Error("method '" + name + "' given twice");
        program.methods.set(name, part.methods.begin()->second);
        for (auto &[fqn, c] : part.constants) {
          const ConstantTensor *existing = program.constants.find(fqn);
          if (existing && !(existing->data == c.data))
            throw Error("constant '" + fqn + "' differs between methods", file);
          program.constants.set(fqn, c);
        }
      }
    }
    std::string source = methods.empty() ? input : methods.front().substr(methods.front().find('=') + 1);
    if (!weights.empty()) {
      attachWeights(program, weights);
      checkDataFiles(program);
    }
    // Without weights the program passes edge and plan and fails only in exir-emit: say so now.
    if (auto missing = constantsWithoutData(program); !missing.empty())
      std::cerr << "exir-edge: warning: '" << (source == "-" ? "<stdin>" : source) << "': " << missing.size()
                << " constant" << (missing.size() == 1 ? "" : "s") << " (e.g. '" << missing.front()
                << "') have no data, so exir-emit will fail; a torch.export JSON carries no weights: pass its .pt2 "
                   "or --weights FILE.safetensors|FILE.pt2\n";
    for (const auto &spec : constantMethods) {
      auto eq = spec.find('=');
      if (eq == std::string::npos || eq == 0)
        throw Error("--constant-method expects NAME=VALUE[,VALUE...], got '" + spec + "'");
      std::string name = spec.substr(0, eq);
      if (program.methods.contains(name) || program.constantMethods.contains(name))
        throw Error("--constant-method '" + name + "' clashes with another method of that name");
      program.constantMethods.set(name, parseConstantValues(spec.substr(eq + 1)));
    }
    attributeErrorsTo(source, [&] { edge::toEdge(program, options); });
    writeProgram(program, output);
  });
}
