//===- tools/exir-run/exir-run.cpp - run any stage or a .pte ---------------===//
//
// Runs an Edge, delegated or planned program JSON (an ATen program is lowered
// to Edge first) or a .pte on the CPU with the reference kernels, and prints
// the outputs or saves them as .npy. --expect / --compare / --check-stages
// turn it into a check that every stage computes what the model computed.
//
//===----------------------------------------------------------------------===//
#include "Run/Compare.h"
#include "Run/Inputs.h"
#include "Run/Interpreter.h"
#include "Run/Kernels/Random.h"
#include "Run/Npy.h"
#include "Support/Error.h"
#include "Tool/PassFlags.h"
#include "Tool/ToolMain.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

using namespace exir;
using namespace exir::run;

namespace {

/// Splits "K=REST" (K: a position or a name).
std::pair<std::string, std::string> splitKey(const std::string &text, const char *flag) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError(std::string(flag) + " expects K=VALUE, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

/// Index of the input named or numbered `key`.
size_t inputIndex(const std::vector<InputInfo> &infos, const std::string &key) {
  for (size_t i = 0; i < infos.size(); ++i)
    if (infos[i].name == key) return i;
  char *end = nullptr;
  unsigned long v = std::strtoul(key.c_str(), &end, 10);
  if (!key.empty() && *end == '\0' && v < infos.size()) return size_t(v);
  std::string names;
  for (size_t i = 0; i < infos.size(); ++i) names += (i ? ", " : "") + std::to_string(i) + "=" + infos[i].name;
  throw Error("the method has no input '" + key + "' (inputs: " + names + ")");
}

struct RunSetup {
  std::string method;
  std::vector<std::string> inputs, sizes;
  uint64_t seed = 0;
};

std::vector<Value> makeInputs(const Executable &exe, const std::string &method, const RunSetup &setup) {
  std::vector<InputInfo> infos = exe.inputs(method);
  std::map<size_t, std::vector<int64_t>> sizes;
  for (const auto &s : setup.sizes) {
    auto [key, dims] = splitKey(s, "--sizes");
    sizes[inputIndex(infos, key)] = parseSizes(dims);
  }
  std::map<size_t, std::string> given;
  for (const auto &s : setup.inputs) {
    auto [key, spec] = splitKey(s, "--input");
    given[inputIndex(infos, key)] = spec;
  }
  std::mt19937_64 rng(setup.seed);
  std::vector<Value> values;
  for (size_t i = 0; i < infos.size(); ++i) {
    std::vector<int64_t> shape = sizes.count(i) ? sizes[i] : infos[i].sizes;
    if (given.count(i)) {
      Value v = loadInput(given[i], infos[i], shape);
      randomInput(infos[i], shape, rng); // keeps the draws of later inputs independent of this one
      values.push_back(std::move(v));
    } else {
      values.push_back(randomInput(infos[i], shape, rng));
    }
  }
  return values;
}

/// The methods to run: the one asked for; else "forward" (or the only method);
/// else every method.
std::vector<std::string> methodsToRun(const Executable &exe, const std::string &requested) {
  if (!requested.empty()) return {requested};
  std::vector<std::string> names = exe.methods();
  if (std::find(names.begin(), names.end(), "forward") != names.end()) return {"forward"};
  return names;
}

/// Compares two runs' outputs; prints one line per differing output.
size_t reportDifferences(const std::vector<Value> &actual, const std::vector<Value> &expected, const Tolerance &tol,
                         const std::string &what) {
  size_t bad = 0;
  if (actual.size() != expected.size()) {
    std::cerr << "exir-run: " << what << ": " << actual.size() << " outputs, expected " << expected.size() << "\n";
    return 1;
  }
  for (size_t k = 0; k < actual.size(); ++k)
    if (auto diff = compareValues(actual[k], expected[k], tol)) {
      std::cerr << "exir-run: " << what << ": output " << k << ": " << *diff << "\n";
      ++bad;
    }
  return bad;
}

/// After a stage diverged: the first intermediate value (by name) that differs.
void reportFirstDifferingValue(const RunResult &result, const RunResult &previous, const Tolerance &tol,
                               const std::string &what) {
  std::map<std::string, const Tensor *> before;
  for (const auto &[name, t] : previous.intermediates) before[name] = &t;
  for (const auto &[name, t] : result.intermediates) {
    auto it = before.find(name);
    if (it == before.end()) continue;
    if (auto diff = compareValues(Value::of(t), Value::of(*it->second), tol)) {
      std::cerr << "exir-run: " << what << ": first differing value is '" << name << "': " << *diff << "\n";
      return;
    }
  }
}

/// The stage files of a Makefile build (scripts/lower-models.mk) next to `path`.
std::vector<std::string> stageFiles(const std::string &path) {
  std::string stem = path;
  for (const char *suffix : {".pte", ".plan.json", ".part.json", ".edge.json", ".json"}) {
    std::string s = suffix;
    if (stem.size() > s.size() && stem.compare(stem.size() - s.size(), s.size(), s) == 0) {
      stem.resize(stem.size() - s.size());
      break;
    }
  }
  std::vector<std::string> files;
  std::string base = stem;
  if (base.size() > 10 && base.compare(base.size() - 10, 10, ".delegated") == 0) base.resize(base.size() - 10);
  for (const std::string &candidate : {base + ".edge.json", stem + ".part.json", stem + ".plan.json", stem + ".pte"})
    if (std::filesystem::exists(candidate) && (files.empty() || files.back() != candidate)) files.push_back(candidate);
  if (files.size() < 2)
    throw Error("--check-stages found fewer than two stage files next to it (" + base + ".edge.json, " + stem +
                ".part.json, " + stem + ".plan.json, " + stem + ".pte)", path);
  return files;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{
      "exir-run: run an Edge, delegated or planned program JSON, or a .pte, with the reference CPU kernels.\n"
      "An ATen program (torch.export JSON or .pt2) is lowered to Edge in memory first. Planned tensors live\n"
      "at their (mem_id, offset) in arenas filled with a poison byte, as the runtime places them.\n\n"
      "Inputs (--input K=SPEC; K is the input's position or name; inputs not given are random, from --seed):\n"
      "  K=x.npy           a .npy file (f32 f64 f16 i64 i32 i16 i8 u8 bool)\n"
      "  K=x.bin           raw little-endian elements; the shape is the method's, or --sizes K=...\n"
      "  K=[[1,2],[3,4]]   a literal tensor (the nesting gives the shape)\n"
      "  K=0.5             a scalar input, or a tensor input filled with the value\n"
      "Dynamic inputs may be smaller than their upper bound (--sizes, or the .npy's shape).\n\n"
      "Examples:\n"
      "  exir-run model.pte --input 0=[1] --input 1=[1]\n"
      "  exir-run model.plan.json --input x=x.npy --output-dir out/\n"
      "  exir-run model.pte --input 0=in0.npy --expect 0=out0.npy --atol 1e-4\n"
      "  exir-run model.edge.json --compare model.pte --seed 3\n"
      "  exir-run out/model.pte --check-stages          # edge -> plan -> .pte, first stage that diverges"};
  std::string input, compareWith, outputDir;
  RunSetup setup;
  std::vector<std::string> expects;
  Tolerance tol;
  bool checkStages = false, noVerify = false;
  app.add_option("input", input, "program JSON, .pt2 or .pte ('-' = stdin: JSON or .pte)")->required();
  app.add_option("--method", setup.method,
                 "NAME: work on method NAME only, as in every exir tool: run it (default: forward, or the only one)");
  app.add_option("--input", setup.inputs, "K=FILE.npy|FILE.bin|LITERAL: input K (position or name)")->allow_extra_args(false);
  app.add_option("--sizes", setup.sizes, "K=d0,d1,...: the shape of input K (dynamic inputs: within the bound)")->allow_extra_args(false);
  app.add_option("--seed", setup.seed, "seed of the random inputs (default 0)");
  app.add_option("--output-dir", outputDir, "save output K as DIR/outK.npy instead of printing");
  app.add_option("--expect", expects, "K=FILE.npy: compare output K with FILE.npy (exit 1 beyond --atol/--rtol)")->allow_extra_args(false);
  app.add_option("--atol", tol.atol, "absolute tolerance (default 1e-5)");
  app.add_option("--rtol", tol.rtol, "relative tolerance (default 1e-5)");
  app.add_flag("--atol-scaled", tol.scaleAtol, "multiply --atol by max(1, max |expected|)");
  app.add_option("--compare", compareWith, "run OTHER on the same inputs and compare the outputs");
  addNoVerifyFlag(app, noVerify, "an ATen input is lowered");
  std::vector<std::string> opLibraries;
  addOpLibraryOption(app, opLibraries);
  app.add_flag("--check-stages", checkStages,
               "run every stage file of a Makefile build next to FILE and report the first that diverges");

  return runTool("exir-run", app, argc, argv, [&] {
    // K=VALUE mistakes are usage errors, found before any input is read.
    for (const auto &s : setup.inputs) splitKey(s, "--input");
    for (const auto &s : setup.sizes) splitKey(s, "--sizes");
    for (const auto &s : expects) splitKey(s, "--expect");
    applyNoVerifyFlag("exir-run", noVerify);
    Program libraries; // registered before any program is read; nothing is written
    addOpLibraries(libraries, opLibraries);
    RunOptions options;
    if (checkStages) {
      std::vector<std::string> files = stageFiles(input);
      options.recordIntermediates = true;
      std::vector<std::unique_ptr<Executable>> exes;
      for (const auto &f : files) exes.push_back(loadExecutable(f));
      std::vector<std::string> methods = methodsToRun(*exes[0], setup.method);
      for (const auto &method : methods) {
        std::string label = methods.size() > 1 ? " (method " + method + ")" : "";
        std::vector<Value> inputs;
        attributeErrorsTo(files[0], [&] { inputs = makeInputs(*exes[0], method, setup); });
        RunResult previous;
        for (size_t s = 0; s < files.size(); ++s) {
          RunResult result;
          attributeErrorsTo(files[s], [&] {
            seedRandomKernels(setup.seed);
            result = exes[s]->run(method, inputs, options);
          });
          if (s > 0) {
            std::string what = "'" + files[s] + "' vs '" + files[s - 1] + "'" + label;
            if (size_t bad = reportDifferences(result.outputs, previous.outputs, tol, what)) {
              reportFirstDifferingValue(result, previous, tol, what);
              throw Error(std::to_string(bad) + " outputs diverge at stage '" + files[s] + "'" + label, input);
            }
          }
          std::cout << files[s] << label << ": " << exes[s]->kind() << ", " << result.outputs.size() << " outputs"
                    << (s ? ", agrees with the previous stage" : "") << "\n";
          previous = std::move(result);
        }
      }
      return;
    }

    auto exe = loadExecutable(input);
    std::unique_ptr<Executable> other = compareWith.empty() ? nullptr : loadExecutable(compareWith);
    std::vector<std::string> methods = methodsToRun(*exe, setup.method);
    if (methods.size() > 1 && !expects.empty())
      throw UsageError("--expect needs --method: '" + displayPath(input) + "' has several methods");
    size_t bad = 0;
    for (const auto &method : methods) {
      // Several methods: outputs are prefixed and saved as METHOD.outK.npy.
      std::string prefix = methods.size() > 1 ? method + "." : "";
      std::vector<Value> inputs;
      RunResult result;
      attributeErrorsTo(input, [&] {
        inputs = makeInputs(*exe, method, setup);
        seedRandomKernels(setup.seed); // rand/randn draw the same numbers in every run
        result = exe->run(method, inputs, options);
      });
      if (other) {
        RunResult otherResult;
        attributeErrorsTo(compareWith, [&] {
          seedRandomKernels(setup.seed);
          otherResult = other->run(method, inputs, options);
        });
        bad += reportDifferences(otherResult.outputs, result.outputs, tol,
                                 "'" + displayPath(compareWith) + "' vs '" + displayPath(input) + "'" +
                                     (methods.size() > 1 ? " (method " + method + ")" : ""));
      }
      for (const auto &e : expects) {
        auto [key, file] = splitKey(e, "--expect");
        char *end = nullptr;
        unsigned long k = std::strtoul(key.c_str(), &end, 10);
        if (*end != '\0' || k >= result.outputs.size())
          throw Error("--expect " + e + ": the method has " + std::to_string(result.outputs.size()) + " outputs");
        Value expected = Value::of(readNpyFile(file));
        if (auto diff = compareValues(result.outputs[k], expected, tol)) {
          std::cerr << "exir-run: '" << displayPath(input) << "': output " << k << " vs '" << file << "': " << *diff << "\n";
          ++bad;
        }
      }
      if (!outputDir.empty()) std::filesystem::create_directories(outputDir);
      for (size_t k = 0; k < result.outputs.size(); ++k) {
        const Value &v = result.outputs[k];
        if (!outputDir.empty() && v.isTensor())
          writeNpyFile(outputDir + "/" + prefix + "out" + std::to_string(k) + ".npy", v.toTensor());
        else
          std::cout << prefix << "output " << k << ": " << formatValue(v) << "\n";
      }
    }
    if (bad) throw Error(std::to_string(bad) + " outputs differ beyond atol " + std::to_string(tol.atol) + ", rtol " +
                             std::to_string(tol.rtol),
                         input);
  });
}
