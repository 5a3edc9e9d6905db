//===- Support/Allocator.h - Heap tuning for large programs ----*- C++ -*-===//
#pragma once

namespace exir {

/// Asks the allocator (mimalloc) to back the heap with 2 MiB pages. Called first
/// thing by every tool; see Allocator.cpp for the measurements behind it.
void enableLargePageHeap();

/// Makes a failed allocation throw std::bad_alloc, which runTool reports as
/// "out of memory" (exit 1). Without it mimalloc, built as C, aborts the process
/// when operator new finds no new_handler. Called by runTool.
void throwBadAllocOnExhaustion();

} // namespace exir
