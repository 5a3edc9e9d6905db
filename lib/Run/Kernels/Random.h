//===- Run/Kernels/Random.h - The random kernels' generator -----*- C++ -*-===//
//
// rand/randn/randperm cannot reproduce PyTorch's numbers (its generator is
// not ours), so they only promise repeatability: one process-wide generator
// that a runner reseeds before each run, so that the same program run twice
// (or two stages of it compared in one process) draws the same numbers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace exir::run {

/// Restarts the generator of the random kernels (the default seed is 0).
void seedRandomKernels(uint64_t seed);

} // namespace exir::run
