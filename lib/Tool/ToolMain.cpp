//===- Tool/ToolMain.cpp - What every exir-* tool shares ------------------===//
#include "Tool/ToolMain.h"
#include "IR/Pass.h"
#include "Ops/OpLibrary.h"
#include "Serde/ExportJson.h"
#include "Serde/ProgramReader.h"
#include "Support/Allocator.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Signals.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>
#include <unistd.h>

namespace exir {

namespace {
/// Inputs read from a bare torch.export JSON, whose one method is "forward" in
/// our IR but whose JSON has the graph at the top level.
std::set<std::string> &bareExportInputs() {
  static std::set<std::string> paths;
  return paths;
}

/// "/methods/forward/graph_module/..." -> "/graph_module/...": a location in
/// the bare torch.export JSON's own structure.
void pointIntoBareExport(Error &e) {
  const std::string prefix = "/methods/forward";
  const std::string &loc = e.location();
  if (loc.compare(0, prefix.size(), prefix) != 0) return;
  if (loc.size() > prefix.size() && loc[prefix.size()] != '/' && loc[prefix.size()] != ' ') return;
  std::string rest = loc.substr(prefix.size());
  e = Error(e.message(), e.file(), rest.empty() || rest[0] == ' ' ? "/" + rest : rest);
}

/// A file read some other way (exir-run): a JSON object whose first key is not
/// "format" (our artifact writes it first) is a bare torch.export JSON.
bool looksLikeBareExportJson(const std::string &path) {
  if (path == "-") return false;
  try {
    std::string head = readFileRange(path, 0, std::min<uint64_t>(fileSize(path), 64));
    size_t key = head.find_first_not_of(" \t\r\n");
    if (key == std::string::npos || head[key] != '{') return false;
    key = head.find_first_not_of(" \t\r\n", key + 1);
    return key != std::string::npos && head.compare(key, 8, "\"format\"") != 0;
  } catch (const Error &) {
    return false;
  }
}
} // namespace

int runTool(const std::string &toolName, CLI::App &app, int argc, char **argv,
            const std::function<void()> &body) {
  enableLargePageHeap();
  throwBadAllocOnExhaustion();
  installCleanupSignalHandlers();
  // std::cout buffers on its own instead of handing every insertion to stdio
  // (an fwrite per call: exir-inspect's text dump of mlp-100k's .pte, 2.29G ->
  // 2.19G instructions). Nothing writes to stdout through stdio, and std::cerr,
  // tied to std::cout, still flushes it first, so the two keep their order.
  std::ios::sync_with_stdio(false);
  try {
    // A repeatable option takes one value per use, so `--pass NAME model.pt2`
    // never swallows the input file (CLI11's vectors take all that follow).
    for (CLI::Option *opt : app.get_options())
      if (opt->get_expected_max() > 1 && opt->get_positional() == false)
        opt->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::cerr << toolName << ": error: " << e.what() << "\n"
              << "Run with --help for more information.\n";
    return ExitUsage;
  }
  try {
    // Every output of the run is put in place only once all of them were written.
    OutputTransaction outputs;
    body();
    outputs.commit();
    flushStdout(); // a full stdout (> /dev/full) is an error, not a silent exit 0
    return ExitOk;
  } catch (const UsageError &e) {
    std::cerr << toolName << ": error: " << e.what() << "\n"
              << "Run with --help for more information.\n";
    return ExitUsage;
  } catch (const Error &e) {
    // Whatever threw it, standard input is named "<stdin>", never "-".
    Error shown = e.file() == "-" ? Error(e.message(), displayPath(e.file()), e.location()) : e;
    // In a bare torch.export JSON, locations point into that file's own structure.
    std::string path = shown.file() == "<stdin>" ? "-" : shown.file();
    if (!path.empty() && (bareExportInputs().count(path) || looksLikeBareExportJson(path)))
      pointIntoBareExport(shown);
    std::cerr << toolName << ": error: " << shown.render() << "\n";
    return ExitBadInput;
  } catch (const InternalError &e) {
    std::cerr << toolName << ": internal error: " << e.what() << "\n";
    return ExitInternal;
  } catch (const std::bad_alloc &) {
    std::cerr << toolName << ": error: out of memory\n";
    return ExitBadInput;
  } catch (const std::exception &e) {
    std::cerr << toolName << ": internal error: " << e.what() << "\n";
    return ExitInternal;
  }
}

void detail::buryAtExit(void *object) {
  // Never destroyed: a static vector would free its objects at exit after all.
  static auto *graveyard = new std::vector<void *>();
  graveyard->push_back(object);
}

std::string displayPath(const std::string &path) { return path == "-" ? "<stdin>" : path; }

static const char *toolForStage(Stage s) {
  switch (s) {
  case Stage::Aten: return "exir-edge";
  case Stage::Edge: return "exir-partition or exir-plan";
  case Stage::Delegated: return "exir-plan";
  case Stage::Planned: return "exir-emit";
  }
  return "?";
}

static const char *stageNoun(Stage s) {
  switch (s) {
  case Stage::Aten: return "an ATen-dialect program";
  case Stage::Edge: return "an Edge-dialect program";
  case Stage::Delegated: return "a delegated (partitioned) program";
  case Stage::Planned: return "a planned program";
  }
  return "?";
}

Program readProgramOfStage(const std::string &path, std::initializer_list<Stage> accepted,
                           const ReadOptions &options) {
  InputFormat format;
  Program program = readProgram(path, format, options);
  if (format == InputFormat::ExportJson && program.methods.size() == 1) bareExportInputs().insert(path);
  attributeErrorsTo(path, [&] { registerOpLibraries(program); });
  for (Stage s : accepted)
    if (program.stage == s) {
      attributeErrorsTo(path, [&] { checkDataFiles(program); });
      return program;
    }
  std::string want;
  for (Stage s : accepted) want += std::string(want.empty() ? "" : " or ") + stageName(s);
  // Which tool turns the program we got into one we accept.
  Stage first = *accepted.begin();
  std::string hint;
  if (static_cast<int>(program.stage) < static_cast<int>(first))
    hint = std::string("; run ") + toolForStage(program.stage) + " first";
  else
    hint = "; this stage was already run";
  throw Error(std::string("is ") + stageNoun(program.stage) + ", expected stage '" + want + "'" + hint,
              displayPath(path));
}

void addOpLibraryOption(CLI::App &app, std::vector<std::string> &paths) {
  app.add_option("--op-library", paths,
                 "FILE.yaml: custom operators (schemas, out variants, dtype rules; see edge_ops/OP_LIBRARY.md), "
                 "recorded in the output so later tools need no flag (repeatable)");
}

void addOpLibraries(Program &program, const std::vector<std::string> &paths) {
  for (const auto &path : paths) addOpLibrary(program, path);
}

void attributeErrorsTo(const std::string &path, const std::function<void()> &work) {
  try {
    work();
  } catch (Error &e) {
    e.withFile(displayPath(path));
    throw;
  }
}

ProgressBar::ProgressBar(std::string label, size_t total, size_t threshold)
    : label_(std::move(label)), total_(total), enabled_(total >= threshold && isatty(2)) {}

ProgressBar::~ProgressBar() {
  if (enabled_ && lastPercent_ >= 0) std::cerr << "\r\033[K" << std::flush;
}

void ProgressBar::update(size_t done) {
  if (!enabled_ || total_ == 0) return;
  int percent = static_cast<int>(done * 100 / total_);
  if (percent == lastPercent_) return;
  lastPercent_ = percent;
  int width = 30, filled = percent * width / 100;
  std::cerr << "\r" << label_ << " [" << std::string(filled, '#') << std::string(width - filled, ' ') << "] "
            << percent << "%" << std::flush;
}

void verifyWhileWriting(PassTimer &timer, const std::string &output, const std::function<void()> &verify,
                        const std::function<void()> &write) {
  std::error_code statError;
  auto status = std::filesystem::status(output, statError);
  bool staged = output == "-" || status.type() == std::filesystem::file_type::not_found ||
                status.type() == std::filesystem::file_type::regular;
  if (staged) {
    timer.timeBeside("(verifier)", verify, "(write output)", write);
  } else {
    timer.time("(verifier)", verify);
    timer.time("(write output)", write);
  }
}

} // namespace exir
