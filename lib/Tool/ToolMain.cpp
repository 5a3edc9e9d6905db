//===- Tool/ToolMain.cpp - What every exir-* tool shares ------------------===//
#include "Tool/ToolMain.h"
#include "Serde/ProgramReader.h"
#include "Support/Allocator.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Signals.h"

#include <iostream>
#include <unistd.h>

namespace exir {

int runTool(const std::string &toolName, CLI::App &app, int argc, char **argv,
            const std::function<void()> &body) {
  enableLargePageHeap();
  throwBadAllocOnExhaustion();
  installCleanupSignalHandlers();
  try {
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
  } catch (const Error &e) {
    std::cerr << toolName << ": error: " << e.render() << "\n";
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

Program readProgramOfStage(const std::string &path, std::initializer_list<Stage> accepted) {
  Program program = readProgram(path);
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
              path == "-" ? "<stdin>" : path);
}

void attributeErrorsTo(const std::string &path, const std::function<void()> &work) {
  try {
    work();
  } catch (Error &e) {
    e.withFile(path == "-" ? "<stdin>" : path);
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

} // namespace exir
