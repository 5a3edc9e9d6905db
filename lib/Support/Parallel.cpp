//===- Support/Parallel.cpp - Two independent tasks side by side ----------===//
#include "Support/Parallel.h"

#include <exception>
#include <system_error>
#include <thread>

#include <time.h>

namespace exir {

void runBeside(const std::function<void()> &first, const std::function<void()> &second) {
  std::exception_ptr firstError, secondError;
  std::thread thread;
  try {
    thread = std::thread([&] {
      try {
        first();
      } catch (...) {
        firstError = std::current_exception();
      }
    });
  } catch (const std::system_error &) {
    first(); // no thread to be had: in order, as without one
    second();
    return;
  }
  try {
    second();
  } catch (...) {
    secondError = std::current_exception();
  }
  thread.join();
  if (firstError) std::rethrow_exception(firstError);
  if (secondError) std::rethrow_exception(secondError);
}

double threadCpuMs() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

} // namespace exir
