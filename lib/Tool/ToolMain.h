//===- Tool/ToolMain.h - What every exir-* tool shares ---------*- C++ -*-===//
//
// The common part of the tools' main(): error reporting with stable exit codes
// (0 ok, 1 bad input, 2 usage, 3 internal error), reading a program of an
// expected stage with a message that says which tool to run first, writing the
// result atomically, and a progress bar on stderr for long work.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"
#include "Serde/ProgramReader.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace exir {

/// A command-line mistake found after parsing (a missing input, flags that do
/// not combine, a malformed NAME=VALUE): reported like CLI11's own parse
/// errors, "tool: error: message" and a --help hint, with exit code 2.
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// How messages name a path: "<stdin>" for "-", else the path itself.
std::string displayPath(const std::string &path);

/// Runs `body` and maps what it throws to a message on stderr and an exit code:
/// exir::Error -> "tool: error: 'file': location: message", 1;
/// CLI11 parse errors and UsageError -> usage message, 2 (help/version -> 0);
/// anything else -> "tool: internal error: ...", 3.
int runTool(const std::string &toolName, CLI::App &app, int argc, char **argv,
            const std::function<void()> &body);

/// Reads `path` and checks that it holds a program of `expected` stage; when it
/// does not, the error says which tool to run first.
Program readProgramOfStage(const std::string &path, std::initializer_list<Stage> accepted,
                           const ReadOptions &options = {});

/// --op-library FILE.yaml (repeatable), the same in every tool.
void addOpLibraryOption(CLI::App &app, std::vector<std::string> &paths);

/// Registers the op libraries `paths` names and records them in `program`
/// (the libraries a program already records are registered when it is read).
void addOpLibraries(Program &program, const std::vector<std::string> &paths);

/// Runs `work`; an exir::Error it throws without a file gets `path` as its file
/// (verifiers and passes do not know which file the program came from).
void attributeErrorsTo(const std::string &path, const std::function<void()> &work);

/// Keeps `object` (a Program, the .pte being written) alive until the process
/// exits, instead of freeing it piece by piece: a 100k-node program is
/// millions of small objects and freeing them only delays the exit (LLVM's
/// tools skip it the same way). Call it once the object's last use is over.
/// The object stays reachable from a global, so leak checkers (ASan) see no leak.
template <class T> void releaseAtExit(T &&object);

namespace detail {
void buryAtExit(void *object);
}
template <class T> void releaseAtExit(T &&object) {
  detail::buryAtExit(new std::decay_t<T>(std::forward<T>(object)));
}

class PassTimer;

/// Runs `verify` beside `write` (rows "(verifier)" and "(write output)" of
/// `timer`) when `output` is staged (stdout, a new or regular file): both only
/// read the program, and a staged output appears only when runTool commits,
/// so a program the verifier refuses still leaves no output and its error is
/// the one reported, as when it ran first. An output that is written in place
/// (a FIFO, a device) is verified first.
void verifyWhileWriting(PassTimer &timer, const std::string &output, const std::function<void()> &verify,
                        const std::function<void()> &write);

/// A textual progress bar on stderr, shown only when stderr is a terminal and
/// the work is long (total >= threshold).
class ProgressBar {
public:
  ProgressBar(std::string label, size_t total, size_t threshold = 20000);
  ~ProgressBar();
  void update(size_t done);

private:
  std::string label_;
  size_t total_;
  bool enabled_;
  int lastPercent_ = -1;
};

} // namespace exir
