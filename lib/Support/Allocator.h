//===- Support/Allocator.h - Heap tuning for large programs ----*- C++ -*-===//
#pragma once

namespace exir {

/// Asks the allocator (mimalloc) to back the heap with 2 MiB pages. Called first
/// thing by every tool; see Allocator.cpp for the measurements behind it.
void enableLargePageHeap();

} // namespace exir
