//===- Support/Parallel.h - Two independent tasks side by side --*- C++ -*-===//
//
// The machine has two cores; a tool whose steps only read their input (a
// verifier beside the emitter) can use both without changing what it prints.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>

namespace exir {

/// Runs `first` on a second thread while `second` runs on this one, and
/// returns when both are done. An exception of `first` is rethrown whatever
/// `second` did, otherwise one of `second`'s: the error a sequential
/// `first(); second();` reports. Neither exception escapes its thread (none
/// can terminate the process). Both tasks must be safe to run concurrently
/// (they only read shared data); if no thread can be started they run one
/// after the other, and `second` is skipped when `first` throws.
void runBeside(const std::function<void()> &first, const std::function<void()> &second);

/// CPU time (user + system) the calling thread has used, in milliseconds:
/// for timing a task that runs beside another, where the process's CPU time
/// counts both.
double threadCpuMs();

} // namespace exir
