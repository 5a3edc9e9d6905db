//===- IR/Pass.h - Passes and the pass manager -----------------*- C++ -*-===//
//
// One Pass interface for every stage. A pass transforms the whole Program (so
// whole-program passes such as multi-method planning need no special casing).
// The PassManager owns instrumentation: verification after each pass
// (--verify-each, on by default), printing after a pass (--print-after), and
// timing. Passes themselves never print.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace exir {

class Pass {
public:
  virtual ~Pass() = default;
  /// Kebab-case CLI name, e.g. "decompose-linear".
  virtual std::string name() const = 0;
  virtual void run(Program &program) = 0;
};

/// A registry entry: the CLI name, a one-line summary and a factory.
struct PassInfo {
  std::string name;
  std::string summary;
  std::function<std::unique_ptr<Pass>()> create;
};

/// Adapts a free function `void(Program&)` into a Pass.
class FunctionPass : public Pass {
public:
  FunctionPass(std::string name, std::function<void(Program &)> fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string name() const override { return name_; }
  void run(Program &program) override { fn_(program); }

private:
  std::string name_;
  std::function<void(Program &)> fn_;
};

/// Wall time and the process's CPU time (user + system) since construction:
/// on a loaded machine wall time says little, CPU time stays put.
class PassClock {
public:
  PassClock();
  double wallMs() const;
  double cpuMs() const;
  /// When the clock started, in ms of the steady clock (steadyMs()).
  double startMs() const;

private:
  std::chrono::steady_clock::time_point wall_;
  double cpu_; // ms of CLOCK_PROCESS_CPUTIME_ID at construction
};

/// Now on the steady clock, in ms: the time base of PassTimer's spans.
double steadyMs();

/// Wall and CPU time per pass over a whole tool run (several pass managers, or
/// steps timed by hand), reported like LLVM's -time-passes: one line per pass
/// name, runs of the same pass summed, the slowest first, then the total.
/// Steps may run side by side on two threads (runBeside): each times its own
/// thread (timeOnThisThread) and is added afterwards from the timer's thread.
/// The Total's CPU is the sum of the rows; its wall time is the elapsed time
/// the timed steps covered, overlapping rows counted once.
class PassTimer {
public:
  PassTimer();

  struct Entry {
    std::string name;
    double wallMs = 0, cpuMs = 0;
    /// Some run of it was on another thread than the timer's (beside that
    /// thread's steps): its wall time overlaps theirs.
    bool beside = false;
  };
  /// One run of a step timed on the thread that ran it (timeOnThisThread).
  struct Step {
    std::string name;
    double wallMs = 0, cpuMs = 0; // cpuMs: the running thread's alone
    double startMs = 0, endMs = 0; // when it ran, on the steady clock
    bool beside = false;           // it ran on another thread than the timer's
  };

  /// Adds a run of `pass` that ended now and took `wallMs`.
  void add(const std::string &pass, double wallMs, double cpuMs);
  /// Adds a run of `pass` from `since` to now (the process's CPU time).
  void add(const std::string &pass, const PassClock &since);
  /// Adds a run timed by timeOnThisThread. Like every add, only from one thread.
  void add(const Step &step);
  /// Runs `work` and adds its wall and CPU time under `pass`.
  void time(const std::string &pass, const std::function<void()> &work);
  /// Runs `work` and times it into `step` (the step's name is kept): wall time
  /// and the calling thread's CPU time, for a step that runs beside another,
  /// where the process's CPU time counts both. Safe on any thread (it does not
  /// touch the timer's entries); add() the step afterwards.
  void timeOnThisThread(Step &step, const std::function<void()> &work) const;
  /// Runs `first` beside `second` (runBeside, whose errors it passes on) and,
  /// when both succeed, adds a row for each: `first` with its own thread's CPU
  /// time, `second` with the rest of the process's CPU time over the two (the
  /// threads `second` starts to read or write in halves included), so the CPU
  /// column still adds up to the process's.
  void timeBeside(const std::string &firstName, const std::function<void()> &first, const std::string &secondName,
                  const std::function<void()> &second);
  /// The report; `title` names the tool ("exir-edge").
  void print(std::ostream &os, const std::string &title) const;
  /// In first-run order, runs of a pass summed.
  const std::vector<Entry> &entries() const { return entries_; }
  /// The elapsed wall time of the timed runs: the length of the union of their spans.
  double elapsedMs() const;

private:
  void add(const std::string &pass, double wallMs, double cpuMs, double startMs, double endMs, bool beside);

  std::vector<Entry> entries_;
  std::vector<std::pair<double, double>> spans_; // every run's [start, end], steady-clock ms
  std::thread::id thread_;                        // the timer's (constructing) thread
};

struct PassManagerOptions {
  bool verifyEach = true;
  std::vector<std::string> printAfter; // pass names, or "all"
  bool timePasses = false;
  std::ostream *printStream = nullptr; // where --print-after output goes (stderr by default)
  PassTimer *timer = nullptr;          // with timePasses, collects the times here
};

class PassManager {
public:
  /// `verify` is the stage verifier run after each pass when verifyEach is on.
  PassManager(PassManagerOptions options, std::function<void(const Program &)> verify)
      : options_(std::move(options)), verify_(std::move(verify)) {}

  void add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  void run(Program &program);
  /// "pass-a,pass-b" as given to --passes; round-trips through the registry.
  std::string pipelineText() const;

private:
  PassManagerOptions options_;
  std::function<void(const Program &)> verify_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

} // namespace exir
