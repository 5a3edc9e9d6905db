//===- tests/Support/HugePages.cpp - the heap asks for huge pages ---------===//
//
// This kernel backs only madvised ranges with transparent huge pages, and two
// kinds of heap memory were not advised: the main thread's first mimalloc
// segment (mapped before Allocator.cpp sets mimalloc's options) and blocks of
// 16 MiB or more whose size is not a multiple of 2 MiB. Faulted in 4 KiB at a
// time they cost a stage 8-26k page faults at 100k nodes. The checks read the
// VmFlags of the mapping ("hg" = MADV_HUGEPAGE) from /proc/self/smaps.
//
// Built only with mimalloc (not in sanitizer or fuzz builds) and on kernels
// with transparent huge pages: see tests/CMakeLists.txt.
//
//===----------------------------------------------------------------------===//
#include "Support/Allocator.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace {

/// The VmFlags line of the mapping that holds `p` ("" when none does).
std::string vmFlagsAt(const void *p) {
  std::ifstream smaps("/proc/self/smaps");
  auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    unsigned long long from = 0, to = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s", &from, &to, perms) == 3) {
      inside = from <= at && at < to;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line + " ";
  }
  return "";
}

bool advisedForHugePages(const void *p) { return vmFlagsAt(p).find(" hg ") != std::string::npos; }

} // namespace

TEST_CASE("Heap: the main thread's small blocks lie in memory advised for huge pages", "[allocator]") {
  exir::enableLargePageHeap(); // links Allocator.cpp (and its operator new) into this test
  // Small blocks of the main thread come from its first segment until it fills.
  auto block = std::make_unique<int>(42);
  INFO(vmFlagsAt(block.get()));
  CHECK(advisedForHugePages(block.get()));
}

TEST_CASE("Heap: a block of 16 MiB or more whose size is no multiple of 2 MiB is advised", "[allocator]") {
  for (size_t size : {(size_t(19) << 20) + 4096, (size_t(33) << 20) + 100, size_t(5) << 20}) {
    std::unique_ptr<char[]> block(new char[size]);
    INFO("block of " << size << " bytes: " << vmFlagsAt(block.get() + size / 2));
    CHECK(advisedForHugePages(block.get() + size / 2));
  }
}
