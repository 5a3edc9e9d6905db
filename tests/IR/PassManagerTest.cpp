//===- tests/IR/PassManagerTest.cpp - Pass manager instrumentation --------===//
//
// --verify-each catches the first pass that breaks the graph and names it;
// errors thrown by a pass carry its name; --print-after prints only after the
// named passes (or all); timing and the textual pipeline.
//
//===----------------------------------------------------------------------===//
#include "IR/Pass.h"
#include "IR/Verifier.h"
#include "Support/Parallel.h"
#include "GraphBuilder.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <sstream>
#include <thread>

using namespace exir;
using namespace irtest;

namespace {

Program reluProgram() {
  GraphBuilder b;
  b.input("x", ScalarType::Float, {4});
  b.aten("relu.default", {pos("self", T("x"))}, "relu", ScalarType::Float, {4});
  b.output("relu");
  return programOf(b.ep);
}

std::unique_ptr<Pass> renameNothing() {
  return std::make_unique<FunctionPass>("noop", [](Program &) {});
}

/// Makes relu read a value nobody defines.
std::unique_ptr<Pass> breakGraph() {
  return std::make_unique<FunctionPass>("break-graph",
                                        [](Program &p) { graphOf(p).nodes[0].inputs[0].arg = T("ghost"); });
}

auto structural = [](const Program &p) { verifyProgram(p, p.stage); };

} // namespace

TEST_CASE("verify-each names the pass that broke the graph", "[pass]") {
  Program p = reluProgram();
  PassManager pm({}, structural);
  pm.add(renameNothing());
  pm.add(breakGraph());
  int ranAfter = 0;
  pm.add(std::make_unique<FunctionPass>("after", [&](Program &) { ++ranAfter; }));
  try {
    pm.run(p);
    FAIL("no error thrown");
  } catch (const Error &e) {
    CHECK(e.message() == "verification failed after pass break-graph: uses 'ghost' before it is defined (argument "
                         "'self'; graph not in topological order or value missing)");
    CHECK(e.location() == "/methods/forward/graph_module/graph/nodes/0 (relu)/inputs/0");
  }
  CHECK(ranAfter == 0); // the pipeline stops at the broken pass
}

TEST_CASE("without verify-each a broken graph goes unnoticed", "[pass]") {
  Program p = reluProgram();
  PassManagerOptions options;
  options.verifyEach = false;
  PassManager pm(options, structural);
  pm.add(breakGraph());
  CHECK_NOTHROW(pm.run(p));
  CHECK(graphOf(p).nodes[0].inputs[0].arg.name == "ghost");
}

TEST_CASE("errors thrown by a pass carry its name", "[pass]") {
  Program p = reluProgram();
  PassManager pm({}, structural);
  pm.add(std::make_unique<FunctionPass>("refuse", [](Program &) { throw Error("cannot do it", "m.json", "/x"); }));
  try {
    pm.run(p);
    FAIL("no error thrown");
  } catch (const Error &e) {
    CHECK(e.render() == "'m.json': /x: cannot do it [pass refuse]");
  }
}

TEST_CASE("print-after prints only after the named passes", "[pass]") {
  std::ostringstream out;
  PassManagerOptions options;
  options.printAfter = {"second"};
  options.printStream = &out;
  PassTimer timer;
  options.timer = &timer;
  PassManager pm(options, structural);
  pm.add(std::make_unique<FunctionPass>("first", [](Program &) {}));
  pm.add(std::make_unique<FunctionPass>(
      "second", [](Program &p) { graphOf(p).nodes[0].target = "torch.ops.aten.sigmoid.default"; }));
  Program p = reluProgram();
  pm.run(p);
  std::string text = out.str();
  CHECK_THAT(text, Catch::StartsWith("// ----- IR after second -----\nProgram (stage: aten, methods: 1)\n"));
  CHECK_THAT(text, Catch::Contains("relu: \"f32[4]\" = torch.ops.aten.sigmoid.default(x);  x = None\n"));
  CHECK(text.find("IR after first") == std::string::npos);
  CHECK(pm.pipelineText() == "first,second");
  CHECK(timer.entries().empty()); // timing is off by default, even with a timer
}

TEST_CASE("print-after all and time-passes", "[pass]") {
  std::ostringstream out;
  PassManagerOptions options;
  options.printAfter = {"all"};
  options.printStream = &out;
  options.timePasses = true;
  PassTimer timer;
  options.timer = &timer;
  PassManager pm(options, structural);
  pm.add(std::make_unique<FunctionPass>("a", [](Program &) {}));
  pm.add(std::make_unique<FunctionPass>("b", [](Program &) {}));
  Program p = reluProgram();
  pm.run(p);
  std::string text = out.str();
  auto a = text.find("// ----- IR after a -----\n");
  auto b = text.find("// ----- IR after b -----\n");
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  CHECK(a < b);
  // In first-run order: the verifier first ran after "a" (its runs are summed).
  REQUIRE(timer.entries().size() == 3);
  CHECK(timer.entries()[0].name == "a");
  CHECK(timer.entries()[1].name == "(verifier after each pass)");
  CHECK(timer.entries()[2].name == "b");
  CHECK(timer.entries()[0].wallMs >= 0.0);
}

TEST_CASE("a PassTimer sums the runs of a pass over several pass managers", "[pass][time-passes]") {
  PassTimer timer;
  PassManagerOptions options;
  options.timePasses = true;
  options.timer = &timer;
  Program p = reluProgram();
  for (int round = 0; round < 2; ++round) {
    PassManager pm(options, structural);
    pm.add(std::make_unique<FunctionPass>("first", [](Program &) {}));
    pm.add(std::make_unique<FunctionPass>("second", [](Program &) {}));
    pm.run(p);
  }
  timer.time("by-hand", [] {});
  // The verifier that runs after each pass is timed too, as one entry.
  REQUIRE(timer.entries().size() == 4);
  CHECK(timer.entries()[0].name == "first");
  CHECK(timer.entries()[1].name == "(verifier after each pass)");
  CHECK(timer.entries()[2].name == "second");
  CHECK(timer.entries()[3].name == "by-hand");
}

TEST_CASE("the time-passes report lists every pass, the slowest first, and the total", "[pass][time-passes]") {
  PassTimer timer;
  // (wall, CPU, when): the rows are ordered by CPU time, and each column has its own percentages.
  auto step = [](const char *name, double startMs, double endMs, double cpuMs) {
    return PassTimer::Step{name, endMs - startMs, cpuMs, startMs, endMs, false};
  };
  timer.add(step("fast", 0, 0.5, 0.25));
  timer.add(step("slow", 0.5, 1.5, 1.5));
  timer.add(step("fast", 1.5, 4, 0.25)); // a second run of the same pass
  std::ostringstream out;
  timer.print(out, "exir-test");
  std::string text = out.str();
  CHECK_THAT(text, Catch::Contains("... Pass execution timing report (exir-test) ..."));
  CHECK_THAT(text, Catch::Contains("Total Execution Time: 4.000 ms (wall clock), 2.000 ms (CPU)"));
  CHECK_THAT(text, Catch::Contains("--CPU Time (ms)--   --Wall Time (ms)--  --- Name ---"));
  auto slow = text.find("      1.500 ( 75.0%)        1.000 ( 25.0%)  slow\n");
  auto fast = text.find("      0.500 ( 25.0%)        3.000 ( 75.0%)  fast\n");
  auto total = text.find("      2.000 (100.0%)        4.000 (100.0%)  Total\n");
  REQUIRE(slow != std::string::npos);
  REQUIRE(fast != std::string::npos);
  REQUIRE(total != std::string::npos);
  CHECK(slow < fast);
  CHECK(fast < total);
  CHECK(text.find("2nd thread") == std::string::npos); // nothing ran beside
}

TEST_CASE("the time-passes Total wall time is the elapsed time, rows side by side counted once",
          "[pass][time-passes]") {
  PassTimer timer;
  // main thread: read [0, 3), then write [5, 9); beside it: tables [1, 4) and verify [5, 8).
  timer.add(PassTimer::Step{"read", 3, 3, 0, 3, false});
  timer.add(PassTimer::Step{"tables", 3, 2, 1, 4, true});
  timer.add(PassTimer::Step{"verify", 3, 3, 5, 8, true});
  timer.add(PassTimer::Step{"write", 4, 4, 5, 9, false});
  CHECK(timer.elapsedMs() == 8.0); // [0, 4) and [5, 9): the gap between is not timed
  std::ostringstream out;
  timer.print(out, "exir-test");
  std::string text = out.str();
  CHECK_THAT(text, Catch::Contains("Total Execution Time: 8.000 ms (wall clock), 12.000 ms (CPU)"));
  CHECK_THAT(text, Catch::Contains("      3.000 ( 25.0%)        3.000 ( 37.5%)  verify [2nd thread]\n"));
  CHECK_THAT(text, Catch::Contains("      2.000 ( 16.7%)        3.000 ( 37.5%)  tables [2nd thread]\n"));
  CHECK_THAT(text, Catch::Contains("      4.000 ( 33.3%)        4.000 ( 50.0%)  write\n"));
  CHECK_THAT(text, Catch::Contains("     12.000 (100.0%)        8.000 (100.0%)  Total\n"));
  CHECK_THAT(text, Catch::Contains("[2nd thread] ran on a second thread"));
}

TEST_CASE("timeOnThisThread times the calling thread, and marks a step run off the timer's thread",
          "[pass][time-passes]") {
  PassTimer timer;
  PassTimer::Step here{"here"}, there{"there"};
  volatile uint64_t sink = 0;
  std::atomic<bool> started{false};
  // This thread spins until the other's step has begun, so the two overlap.
  auto spin = [&] {
    PassClock clock;
    while (clock.wallMs() < 5 || !started)
      for (int i = 0; i < 1000; ++i) sink = sink + uint64_t(i);
  };
  // The other thread sleeps: its own CPU time stays near zero while this one spins.
  std::thread other([&] {
    timer.timeOnThisThread(there, [&] {
      started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });
  });
  timer.timeOnThisThread(here, spin);
  other.join();
  CHECK(here.name == "here");
  CHECK_FALSE(here.beside);
  CHECK(there.beside);
  CHECK(here.wallMs >= 5);
  CHECK(here.endMs - here.startMs == here.wallMs);
  CHECK(there.wallMs >= 20);
  CHECK(there.cpuMs < 10);
  timer.add(here);
  timer.add(there);
  REQUIRE(timer.entries().size() == 2);
  CHECK_FALSE(timer.entries()[0].beside);
  CHECK(timer.entries()[1].beside);
  // They overlapped: the elapsed time is less than the sum of the rows.
  CHECK(timer.elapsedMs() < here.wallMs + there.wallMs);
  CHECK(timer.elapsedMs() >= there.wallMs);
}

TEST_CASE("PassClock measures the CPU time the process spends", "[pass][time-passes]") {
  PassClock clock;
  volatile uint64_t sink = 0;
  while (clock.cpuMs() < 5)
    for (int i = 0; i < 100000; ++i) sink = sink + uint64_t(i);
  CHECK(clock.cpuMs() >= 5);
  CHECK(clock.wallMs() >= clock.cpuMs() * 0.5); // one thread: CPU time cannot run far ahead of the clock
}

TEST_CASE("timeBeside adds a row per step, the CPU column adding up to the process's", "[pass][time-passes]") {
  PassTimer timer;
  volatile uint64_t sink = 0;
  auto spin = [&](double cpuMs) { // until this thread has used cpuMs of CPU
    double start = threadCpuMs();
    while (threadCpuMs() - start < cpuMs)
      for (int i = 0; i < 1000; ++i) sink = sink + uint64_t(i);
  };
  PassClock whole;
  // `second` starts a helper thread of its own, as the two-half JSON writer
  // does: its CPU time lands in second's row, not in first's.
  timer.timeBeside("first", [&] { spin(5); }, "second", [&] {
    std::thread helper([&] { spin(10); });
    helper.join();
  });
  double processCpu = whole.cpuMs();
  REQUIRE(timer.entries().size() == 2);
  const auto &first = timer.entries()[0], &second = timer.entries()[1];
  CHECK(first.name == "first");
  CHECK(first.beside);
  CHECK(second.name == "second");
  CHECK_FALSE(second.beside);
  CHECK(first.cpuMs >= 4);
  CHECK(second.cpuMs >= 8); // the helper's, though second's own thread only waited
  CHECK(first.cpuMs + second.cpuMs <= processCpu);

  // An error passes on, and no row is added.
  PassTimer failed;
  CHECK_THROWS_AS(failed.timeBeside("first", [] { throw std::runtime_error("no"); }, "second", [] {}),
                  std::runtime_error);
  CHECK(failed.entries().empty());
}
