//===- Tool/PassFlags.h - The pass flags of every tool that runs passes -*- C++ -*-===//
//
// exir-edge, exir-partition and exir-plan (and exir-emit's steps, for timing)
// share one set of instrumentation flags, named after the passes that
// --list-passes shows:
//   --list-passes            the passes in pipeline order, with a summary
//   --print-after PASS|all   the program after PASS on stderr (repeatable, or
//                            comma-separated); an unknown name is a usage error
//                            (exit 2) that lists the valid ones
//   --time-passes            per-pass CPU and wall time on stderr at the end, like LLVM's;
//                            entries in parentheses are not passes: "(read input)",
//                            "(write output)", "(verifier after each pass)"
// and --no-verify (also exir-run's, which lowers ATen inputs): the IR validity
// checks off, with a warning.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Pass.h"

#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace exir {

/// A pass as --list-passes shows it: its name and a one-line summary.
using PassListing = std::vector<std::pair<std::string, std::string>>;

class PassFlags {
public:
  /// Adds the flags to `app`; `passes` are the names --print-after accepts.
  /// `printAfter` = false for a tool whose steps are not program passes (only
  /// --list-passes and --time-passes then).
  PassFlags(CLI::App &app, PassListing passes, bool printAfter = true);

  /// With --list-passes: prints the passes to `os` and returns true.
  bool listPasses(std::ostream &os) const;
  /// Pass-manager options carrying --print-after and --time-passes (times go to timer()).
  PassManagerOptions managerOptions();
  bool timePasses() const { return timePasses_; }
  PassTimer &timer() { return timer_; }
  /// With --time-passes: the report on `os`.
  void report(std::ostream &os, const std::string &toolName) const;

private:
  PassListing passes_;
  std::vector<std::string> printAfter_;
  bool timePasses_ = false, list_ = false;
  PassTimer timer_;
};

/// Adds --no-verify; `what` says what then runs without the IR validity
/// checks ("skip the checks" when empty).
void addNoVerifyFlag(CLI::App &app, bool &noVerify, const std::string &what = {});
/// With --no-verify: turns the IR validity checks off for the process and
/// warns on stderr, so an output made without them is never mistaken for a checked one.
void applyNoVerifyFlag(const std::string &toolName, bool noVerify);

} // namespace exir
