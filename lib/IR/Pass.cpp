//===- IR/Pass.cpp - The pass manager -------------------------------------===//
#include "IR/Pass.h"
#include "IR/GraphPrinter.h"
#include "Support/Error.h"

#include <algorithm>
#include <cstdio>
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
    if (options_.timePasses) {
      double ms = std::chrono::duration<double, std::milli>(end - start).count();
      timings_.emplace_back(pass->name(), ms);
      if (options_.timer) options_.timer->add(pass->name(), ms);
    }
    bool print = std::any_of(options_.printAfter.begin(), options_.printAfter.end(),
                             [&](const std::string &p) { return p == "all" || p == pass->name(); });
    if (print) {
      printOut << "// ----- IR after " << pass->name() << " -----\n";
      printProgram(printOut, program);
    }
    if (options_.verifyEach && verify_) {
      try {
        auto verifyStart = std::chrono::steady_clock::now();
        verify_(program);
        if (options_.timePasses && options_.timer)
          options_.timer->add("(verifier after each pass)", std::chrono::duration<double, std::milli>(
                                                                  std::chrono::steady_clock::now() - verifyStart)
                                                                  .count());
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

void PassTimer::add(const std::string &pass, double milliseconds) {
  for (auto &[name, ms] : entries_)
    if (name == pass) {
      ms += milliseconds;
      return;
    }
  entries_.emplace_back(pass, milliseconds);
}

void PassTimer::time(const std::string &pass, const std::function<void()> &work) {
  auto start = std::chrono::steady_clock::now();
  work();
  add(pass, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

void PassTimer::print(std::ostream &os, const std::string &title) const {
  double total = 0;
  for (const auto &e : entries_) total += e.second;
  auto sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
  const std::string rule = "===" + std::string(73, '-') + "===\n";
  std::string heading = "... Pass execution timing report (" + title + ") ...";
  char line[160];
  os << rule << std::string(heading.size() < 79 ? (79 - heading.size()) / 2 : 0, ' ') << heading << "\n" << rule;
  // Milliseconds, not LLVM's seconds: most passes here take well under one.
  std::snprintf(line, sizeof line, "  Total Execution Time: %.3f ms (wall clock)\n\n", total);
  os << line << "   --Wall Time (ms)--  --- Name ---\n";
  auto row = [&](double ms, const std::string &name) {
    std::snprintf(line, sizeof line, "   %10.3f (%5.1f%%)  ", ms, total > 0 ? 100 * ms / total : 100.0);
    os << line << name << "\n";
  };
  for (const auto &[name, ms] : sorted) row(ms, name);
  row(total, "Total");
  os << "\n";
}

} // namespace exir
