//===- IR/Pass.cpp - The pass manager -------------------------------------===//
#include "IR/Pass.h"
#include "IR/GraphPrinter.h"
#include "Support/Error.h"

#include <algorithm>
#include <iostream>

namespace exir {

void PassManager::run(Program &program) {
  std::ostream &printOut = options_.printStream ? *options_.printStream : std::cerr;
  for (auto &pass : passes_) {
    auto start = std::chrono::steady_clock::now();
    try {
      pass->run(program);
    } catch (Error &e) {
      // Keep the pass name in the message so the user knows which step refused.
      throw Error(e.message() + " [pass " + pass->name() + "]", e.file(), e.location());
    }
    auto end = std::chrono::steady_clock::now();
    if (options_.timePasses)
      timings_.emplace_back(pass->name(), std::chrono::duration<double, std::milli>(end - start).count());
    bool print = std::any_of(options_.printAfter.begin(), options_.printAfter.end(),
                             [&](const std::string &p) { return p == "all" || p == pass->name(); });
    if (print) {
      printOut << "// ----- IR after " << pass->name() << " -----\n";
      printProgram(printOut, program);
    }
    if (options_.verifyEach && verify_) {
      try {
        verify_(program);
      } catch (Error &e) {
        throw Error("verification failed after pass " + pass->name() + ": " + e.message(), e.file(),
                    e.location());
      }
    }
  }
}

std::string PassManager::pipelineText() const {
  std::string out;
  for (const auto &p : passes_) {
    if (!out.empty()) out += ',';
    out += p->name();
  }
  return out;
}

} // namespace exir
