//===- IR/Pass.cpp - The pass manager -------------------------------------===//
#include "IR/Pass.h"
#include "IR/GraphPrinter.h"
#include "Support/Error.h"
#include "Support/Parallel.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace exir {

namespace {
// Marks the rows of steps that ran on a second thread (see PassTimer::print).
const char *const kBesideMark = "[2nd thread]";
} // namespace

void PassManager::run(Program &program) {
  std::ostream &printOut = options_.printStream ? *options_.printStream : std::cerr;
  for (auto &pass : passes_) {
    PassClock start;
    try {
      pass->run(program);
    } catch (Error &e) {
      // Keep the pass name in the message so the user knows which step refused.
      throw Error(e.message() + " [pass " + pass->name() + "]", e.file(), e.location());
    }
    if (options_.timePasses && options_.timer) options_.timer->add(pass->name(), start);
    bool print = std::any_of(options_.printAfter.begin(), options_.printAfter.end(),
                             [&](const std::string &p) { return p == "all" || p == pass->name(); });
    if (print) {
      printOut << "// ----- IR after " << pass->name() << " -----\n";
      printProgram(printOut, program);
    }
    if (options_.verifyEach && verify_) {
      try {
        PassClock verifyStart;
        verify_(program);
        if (options_.timePasses && options_.timer) options_.timer->add("(verifier after each pass)", verifyStart);
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

PassClock::PassClock() : wall_(std::chrono::steady_clock::now()), cpu_(0) { cpu_ = cpuMs(); }

double PassClock::wallMs() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_).count();
}

double PassClock::cpuMs() const {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6 - cpu_;
}

double PassClock::startMs() const {
  return std::chrono::duration<double, std::milli>(wall_.time_since_epoch()).count();
}

double steadyMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

PassTimer::PassTimer() : thread_(std::this_thread::get_id()) {}

void PassTimer::add(const std::string &pass, double wallMs, double cpuMs, double startMs, double endMs,
                    bool beside) {
  spans_.emplace_back(startMs, endMs);
  for (auto &e : entries_)
    if (e.name == pass) {
      e.wallMs += wallMs;
      e.cpuMs += cpuMs;
      e.beside = e.beside || beside;
      return;
    }
  entries_.push_back({pass, wallMs, cpuMs, beside});
}

void PassTimer::add(const std::string &pass, double wallMs, double cpuMs) {
  double end = steadyMs();
  add(pass, wallMs, cpuMs, end - wallMs, end, false);
}

void PassTimer::add(const std::string &pass, const PassClock &since) {
  double wall = since.wallMs(), cpu = since.cpuMs();
  add(pass, wall, cpu, since.startMs(), since.startMs() + wall, false);
}

void PassTimer::add(const Step &step) {
  add(step.name, step.wallMs, step.cpuMs, step.startMs, step.endMs, step.beside);
}

void PassTimer::time(const std::string &pass, const std::function<void()> &work) {
  PassClock start;
  work();
  add(pass, start);
}

void PassTimer::timeOnThisThread(Step &step, const std::function<void()> &work) const {
  double start = steadyMs(), cpu = threadCpuMs();
  work();
  step.cpuMs = threadCpuMs() - cpu;
  step.startMs = start;
  step.endMs = steadyMs();
  step.wallMs = step.endMs - start;
  step.beside = std::this_thread::get_id() != thread_;
}

void PassTimer::timeBeside(const std::string &firstName, const std::function<void()> &first,
                           const std::string &secondName, const std::function<void()> &second) {
  Step a{firstName}, b{secondName};
  PassClock clock;
  runBeside([&] { timeOnThisThread(a, first); }, [&] { timeOnThisThread(b, second); });
  b.cpuMs = std::max(0.0, clock.cpuMs() - a.cpuMs);
  add(a);
  add(b);
}

double PassTimer::elapsedMs() const {
  auto spans = spans_;
  std::sort(spans.begin(), spans.end());
  double total = 0, end = 0;
  bool any = false;
  for (const auto &[s, e] : spans) {
    if (!any || s > end) {
      total += e - s;
      end = e;
      any = true;
    } else if (e > end) {
      total += e - end;
      end = e;
    }
  }
  return total;
}

void PassTimer::print(std::ostream &os, const std::string &title) const {
  // Wall: the elapsed time (rows that ran side by side overlap); CPU: the sum.
  double wall = elapsedMs(), cpu = 0;
  bool anyBeside = false;
  for (const auto &e : entries_) {
    cpu += e.cpuMs;
    anyBeside = anyBeside || e.beside;
  }
  auto sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry &a, const Entry &b) { return a.cpuMs > b.cpuMs; });
  const std::string rule = "===" + std::string(73, '-') + "===\n";
  std::string heading = "... Pass execution timing report (" + title + ") ...";
  char line[160];
  os << rule << std::string(heading.size() < 79 ? (79 - heading.size()) / 2 : 0, ' ') << heading << "\n" << rule;
  // Milliseconds, not LLVM's seconds: most passes here take well under one.
  // CPU is the process's user + system time (LLVM's User+System column).
  std::snprintf(line, sizeof line, "  Total Execution Time: %.3f ms (wall clock), %.3f ms (CPU)\n\n", wall, cpu);
  os << line << "   --CPU Time (ms)--   --Wall Time (ms)--  --- Name ---\n";
  auto row = [&](double cpuMs, double wallMs, const std::string &name) {
    std::snprintf(line, sizeof line, "   %10.3f (%5.1f%%)   %10.3f (%5.1f%%)  ", cpuMs, cpu > 0 ? 100 * cpuMs / cpu : 100.0,
                  wallMs, wall > 0 ? 100 * wallMs / wall : 100.0);
    os << line << name << "\n";
  };
  for (const auto &e : sorted) row(e.cpuMs, e.wallMs, e.beside ? e.name + " " + kBesideMark : e.name);
  row(cpu, wall, "Total");
  if (anyBeside)
    os << "\n  " << kBesideMark << " ran on a second thread, beside the other rows: the wall times overlap,\n"
       << "  and the Total wall time is the elapsed time, not their sum.\n";
  os << "\n";
}

} // namespace exir
