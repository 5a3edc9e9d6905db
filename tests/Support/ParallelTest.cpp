//===- tests/Support/ParallelTest.cpp - Two tasks side by side ------------===//
//
// runBeside runs both tasks to the end and reports the error a sequential run
// would: the first task's over the second's.
//
//===----------------------------------------------------------------------===//
#include "Support/Error.h"
#include "Support/Parallel.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>

using namespace exir;

TEST_CASE("runBeside runs both tasks", "[parallel]") {
  std::atomic<int> done{0};
  std::thread::id firstThread, secondThread;
  runBeside(
      [&] {
        firstThread = std::this_thread::get_id();
        ++done;
      },
      [&] {
        secondThread = std::this_thread::get_id();
        ++done;
      });
  CHECK(done == 2);
  CHECK(secondThread == std::this_thread::get_id());
  CHECK(firstThread != secondThread);
}

TEST_CASE("runBeside reports the first task's error over the second's", "[parallel]") {
  bool secondFinished = false;
  try {
    runBeside([] { throw Error("first failed"); },
              [&] {
                secondFinished = true;
                throw std::runtime_error("second failed");
              });
    FAIL("no exception");
  } catch (const Error &e) {
    CHECK(e.message() == "first failed");
  }
  CHECK(secondFinished);
}

TEST_CASE("runBeside reports the second task's error when the first succeeds", "[parallel]") {
  bool firstFinished = false;
  CHECK_THROWS_WITH(runBeside([&] { firstFinished = true; }, [] { throw std::runtime_error("second failed"); }),
                    "second failed");
  CHECK(firstFinished);
  CHECK_NOTHROW(runBeside([] {}, [] {}));
}

TEST_CASE("threadCpuMs counts this thread's work", "[parallel]") {
  double before = threadCpuMs();
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 20000000; ++i) sink = sink + i;
  CHECK(threadCpuMs() > before);
}
