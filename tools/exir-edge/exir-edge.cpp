//===- tools/exir-edge/exir-edge.cpp - to_edge ----------------------------===//
//
// Reads an ATen-dialect program (torch.export JSON, .pt2, or our artifact),
// lowers it to the Edge dialect and writes the program JSON.
//
//===----------------------------------------------------------------------===//
#include "Edge/DescribeOp.h"
#include "Edge/OpInfo.h"
#include "Ops/EdgeYaml.h"
#include "Ops/OpLibrary.h"
#include "Edge/Passes.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"
#include "Tool/PassFlags.h"
#include "Tool/ToolMain.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <iostream>
#include <set>

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

/// Records `lib` once (methods read from several files may share one).
static void addOpLibraryRecord(Program &program, const OpLibraryRecord &lib) {
  for (const auto &existing : program.opLibraries)
    if (existing.sha256 == lib.sha256) return;
  program.opLibraries.push_back(lib);
}

/// --method NAME...: keeps the methods named, and the constants they use.
static void keepMethods(Program &program, const std::vector<std::string> &names, const std::string &source) {
  std::string all;
  for (const auto &[name, m] : program.methods) all += (all.empty() ? "" : ", ") + name;
  for (const auto &name : names)
    if (!program.methods.contains(name))
      throw Error("--method '" + name + "': the program has no such method (methods: " + all + ")",
                  displayPath(source));
  OrderedMap<Method> kept;
  std::set<std::string> used;
  for (const auto &[name, m] : program.methods) {
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    for (const auto &spec : m.program.signature.inputSpecs) used.insert(spec.target);
    kept.set(name, m);
  }
  program.methods = std::move(kept);
  OrderedMap<ConstantTensor> constants;
  for (const auto &[fqn, c] : program.constants)
    if (used.count(fqn)) constants.set(fqn, c);
  program.constants = std::move(constants);
}

int main(int argc, char **argv) {
  CLI::App app{"exir-edge: lower a torch.export program (ATen dialect) to the Edge dialect.\n\n"
               "Examples:\n"
               "  exir-edge model.pt2 -o model.edge.json\n"
               "  exir-edge --add-method encode=enc.pt2 --add-method decode=dec.pt2 -o codec.edge.json\n"
               "  exir-edge codec.pt2 --method encode -o encode.edge.json      # only the method 'encode'\n"
               "  exir-edge model.json --rewrite relu_to_sigmoid.yaml --print-after all\n"
               "  exir-edge model.pt2 --edge-yaml my_edge.yaml -o - | exir-plan - -o model.plan.json\n"
               "  exir-edge model.pt2 --fold-constants never -o model.edge.json  # keep permute_copy of weights\n"
               "  exir-edge --describe-op aten::sigmoid                          # schema, core, out variant, dtypes"};
  std::string input, output = "-", weights;
  std::vector<std::string> methods, addMethods, constantMethods;
  edge::EdgeOptions options;
  std::vector<std::string> describeOps, opLibraries;
  bool verifyEach = false, noVerifyEach = false, noVerify = false;
  app.add_option("input", input, "ATen-dialect program: .pt2, torch.export JSON or program JSON ('-' = stdin)");
  app.add_option("-o,--output", output, "output program JSON (default '-' = stdout)");
  app.add_option("--method", methods,
                 "NAME: work on method NAME only, as in every exir tool; here the output keeps only the methods "
                 "named (repeatable). The older NAME=FILE form means --add-method NAME=FILE");
  app.add_option("--add-method", addMethods,
                 "NAME=FILE: add a method from FILE (repeatable; several methods in one program)");
  app.add_option("--constant-method", constantMethods,
                 "NAME=VALUE[,VALUE...]: a method that returns constants (int, float, true/false, or text)");
  app.add_option("--weights", weights,
                 "FILE.safetensors or FILE.pt2: constant data by FQN (for a torch.export JSON, which has none)");
  app.add_option("--edge-yaml", options.edgeYamlPath,
                 "dtype rules in edge.yaml format for the ops the file lists (the project's edge_ops/edge.yaml covers "
                 "the rest); recorded in the output, so every later tool checks with them");
  addOpLibraryOption(app, opLibraries);
  app.add_flag("--edge-yaml-replace", options.edgeYamlReplace, "--edge-yaml's rules alone: ops the file does not list go unchecked");
  app.add_option("--allow-non-core", options.allowNonCore, "keep this non-core op (e.g. aten::foo.default) instead of failing");
  app.add_option("--pass", options.extraPasses,
                 "run a built-in pass after to_edge (see --list-passes); also on an Edge artifact")
      ->check(CLI::Validator(
          [](std::string &name) -> std::string {
            std::string valid;
            for (const auto &info : edge::edgePassRegistry()) {
              if (info.name == name) return {};
              valid += (valid.empty() ? "" : ", ") + info.name;
            }
            return "unknown pass '" + name + "'; valid names: " + valid;
          },
          "PASS"));
  app.add_option("--rewrite", options.rewriteRules,
                 "apply rewrite rules from a YAML file (lib/Edge/REWRITE_RULES.md) after to_edge; on an Edge "
                 "artifact, only the rules (and --pass) run");
  app.add_option("--decompositions", options.decompositionFiles,
                 "extra decomposition rules (YAML, see lib/Edge/DECOMPOSITIONS.md), tried before the builtin ones");
  app.add_flag("--skip-dim-order", options.skipDimOrder, "keep _to_copy/clone instead of dim_order_ops");
  std::string foldConstants = "auto";
  app.add_option("--fold-constants", foldConstants,
                 "evaluate shape ops on constants (a linear's permute_copy of its weight) at lowering: 'auto' (the "
                 "default) when the emitted constants do not grow, 'always', or 'never'")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->option_text("auto|always|never");
  PassFlags passFlags(app, edge::edgePipelinePasses());
  app.add_option("--describe-op", describeOps,
                 "OP: print what the tools know about OP (aten::sigmoid, aten::add.Tensor, sigmoid): schema, core ATen "
                 "or not, out variant, decomposition, the dtype rows --edge-yaml / edge.yaml allow; then exit");
  CLI::Option *verifyEachFlag = app.add_flag("--verify-each", verifyEach,
               "also verify after every pass, naming the pass that broke the program (the default verifies the "
               "input and the result only)");
  app.add_flag("--no-verify-each", noVerifyEach, "verify only the input and the result (the default)")
      ->excludes(verifyEachFlag);
  addNoVerifyFlag(app, noVerify);

  return runTool("exir-edge", app, argc, argv, [&] {
    if (passFlags.listPasses(std::cout)) return;
    if (!describeOps.empty()) {
      Program none;
      addOpLibraries(none, opLibraries);
      EdgeDtypeRules user;
      std::vector<const EdgeDtypeRules *> layers;
      if (!options.edgeYamlPath.empty()) {
        user = EdgeDtypeRules::loadFile(options.edgeYamlPath);
        layers.push_back(&user);
      }
      if (!options.edgeYamlReplace) {
        std::vector<const EdgeDtypeRules *> libraries = opLibraryDtypeRules();
        layers.insert(layers.end(), libraries.rbegin(), libraries.rend()); // the last loaded wins
        layers.push_back(&EdgeDtypeRules::builtin());
      }
      edge::DecompositionRules decompositions;
      decompositions.prepend(edge::DecompositionRules::builtin());
      for (auto it = options.decompositionFiles.rbegin(); it != options.decompositionFiles.rend(); ++it)
        decompositions.prepend(edge::DecompositionRules::loadFile(*it));
      for (size_t i = 0; i < describeOps.size(); ++i)
        std::cout << (i ? "\n" : "") << edge::describeOp(describeOps[i], layers, decompositions);
      return;
    }
    options.foldConstants = foldConstants == "never"    ? edge::FoldConstantsMode::Never
                            : foldConstants == "always" ? edge::FoldConstantsMode::Always
                                                        : edge::FoldConstantsMode::Auto;
    options.passManager = passFlags.managerOptions();
    options.passManager.verifyEach = verifyEach;
    applyNoVerifyFlag("exir-edge", noVerify);
    // The older spelling --method NAME=FILE adds a method; --method NAME selects one.
    std::vector<std::string> selected;
    for (const auto &m : methods) (m.find('=') != std::string::npos ? addMethods : selected).push_back(m);
    Program program;
    if (addMethods.empty()) {
      if (input.empty()) throw UsageError("no input given (a file, '-', or --add-method NAME=FILE)");
      // An Edge artifact is accepted for the user's passes alone (--pass, --rewrite).
      bool userPasses = !options.rewriteRules.empty() || !options.extraPasses.empty();
      auto read = [&] {
        program = userPasses ? readProgramOfStage(input, {Stage::Aten, Stage::Edge})
                             : readProgramOfStage(input, {Stage::Aten});
      };
      passFlags.timer().time("(read input)", read);
    } else {
      if (!input.empty()) throw UsageError("give either an input file or --add-method options, not both");
      for (const auto &spec : addMethods) {
        auto eq = spec.find('=');
        if (eq == 0 || eq + 1 == spec.size()) throw UsageError("--add-method expects NAME=FILE, got '" + spec + "'");
        std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
        Program part = readProgramOfStage(file, {Stage::Aten});
        if (part.methods.size() != 1) throw Error("expected one method in the file", displayPath(file));
        if (program.methods.contains(name)) throw UsageError("method '" + name + "' given twice");
        program.methods.set(name, part.methods.begin()->second);
        for (const auto &lib : part.opLibraries) addOpLibraryRecord(program, lib);
        for (auto &[fqn, c] : part.constants) {
          const ConstantTensor *existing = program.constants.find(fqn);
          if (existing && !(existing->data == c.data))
            throw Error("constant '" + fqn + "' differs between methods", displayPath(file));
          program.constants.set(fqn, c);
        }
      }
    }
    std::string source = addMethods.empty() ? input : addMethods.front().substr(addMethods.front().find('=') + 1);
    if (!selected.empty()) keepMethods(program, selected, source);
    addOpLibraries(program, opLibraries);
    if (!weights.empty()) {
      attachWeights(program, weights);
      checkDataFiles(program);
    }
    // Without weights the program passes edge and plan and fails only in exir-emit: say so now.
    if (auto missing = constantsWithoutData(program); !missing.empty())
      std::cerr << "exir-edge: warning: '" << displayPath(source) << "': " << missing.size()
                << " constant" << (missing.size() == 1 ? "" : "s") << " (e.g. '" << missing.front()
                << "') have no data, so exir-emit will fail; a torch.export JSON carries no weights: pass its .pt2 "
                   "or --weights FILE.safetensors|FILE.pt2\n";
    for (const auto &spec : constantMethods) {
      auto eq = spec.find('=');
      if (eq == std::string::npos || eq == 0)
        throw UsageError("--constant-method expects NAME=VALUE[,VALUE...], got '" + spec + "'");
      std::string name = spec.substr(0, eq);
      if (program.methods.contains(name) || program.constantMethods.contains(name))
        throw UsageError("--constant-method '" + name + "' clashes with another method of that name");
      program.constantMethods.set(name, parseConstantValues(spec.substr(eq + 1)));
    }
    options.verifyResult = false; // verified below, beside the writing
    std::optional<edge::DtypeRules> rules;
    attributeErrorsTo(source, [&] {
      if (program.stage == Stage::Edge) edge::runUserPassesOnEdge(program, options);
      else edge::toEdge(program, options);
      rules.emplace(edge::DtypeRules::forProgram(program));
    });
    verifyWhileWriting(
        passFlags.timer(), output,
        [&] { attributeErrorsTo(source, [&] { edge::verifyEdgeProgram(program, *rules); }); },
        [&] { writeProgram(program, output); });
    passFlags.report(std::cerr, "exir-edge");
    releaseAtExit(std::move(program));
  });
}
