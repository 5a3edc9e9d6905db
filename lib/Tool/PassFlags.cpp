//===- Tool/PassFlags.cpp - The pass flags of every tool that runs passes -===//
#include "Tool/PassFlags.h"
#include "Edge/OpInfo.h"

#include <iostream>

namespace exir {

PassFlags::PassFlags(CLI::App &app, PassListing passes, bool printAfter) : passes_(std::move(passes)) {
  app.add_flag("--list-passes", list_, "list the passes in pipeline order and exit");
  app.add_flag("--time-passes", timePasses_, "report the CPU and wall time of each pass on stderr");
  if (!printAfter) return;
  std::string valid = "all";
  for (const auto &p : passes_) valid += ", " + p.first;
  // One name per occurrence (so a following input file is never taken for a
  // pass name), several with commas.
  app.add_option("--print-after", printAfter_, "print the program after PASS (see --list-passes) or 'all' to stderr")
      ->type_name("PASS|all")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->delimiter(',')
      ->check(CLI::Validator(
          [this, valid](std::string &name) -> std::string {
            if (name == "all") return {};
            for (const auto &p : passes_)
              if (p.first == name) return {};
            return "unknown pass '" + name + "'; valid names: " + valid;
          },
          "PASS|all"));
}

bool PassFlags::listPasses(std::ostream &os) const {
  if (!list_) return false;
  size_t width = 0;
  for (const auto &p : passes_) width = std::max(width, p.first.size());
  for (const auto &[name, summary] : passes_) os << name << std::string(width + 2 - name.size(), ' ') << summary << "\n";
  return true;
}

PassManagerOptions PassFlags::managerOptions() {
  PassManagerOptions options;
  options.printAfter = printAfter_;
  options.timePasses = timePasses_;
  options.timer = &timer_;
  return options;
}

void PassFlags::report(std::ostream &os, const std::string &toolName) const {
  if (timePasses_) timer_.print(os, toolName);
}

void addNoVerifyFlag(CLI::App &app, bool &noVerify, const std::string &what) {
  app.add_flag("--no-verify", noVerify,
               (what.empty() ? std::string("skip") : what + " without") +
                   " the IR validity checks (core ATen op set, edge.yaml dtype rules), as upstream's "
                   "_check_ir_validity=False; structural checks still run");
}

void applyNoVerifyFlag(const std::string &toolName, bool noVerify) {
  if (!noVerify) return;
  edge::setIrValidityChecks(false);
  std::cerr << toolName << ": warning: --no-verify: IR validity checks (core ATen ops, dtype rules) are off\n";
}

} // namespace exir
