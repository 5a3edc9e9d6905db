//===- Support/Allocator.cpp - Heap tuning for large programs -------------===//
//
// Every tool links mimalloc (Debian's libmimalloc, which replaces malloc/new
// when linked) and asks it for 2 MiB pages; operator new is ours (see the end
// of this file). Reading a 100k-node program builds ~500 MB of small objects;
// with 4 KiB pages the kernel's page-fault handling dominated on these
// machines (bench/json_bench.sh, 100k nodes: read 2.5 s with glibc malloc,
// 0.48 s with mimalloc and large pages).
//
// The fuzz build (EXIR_FUZZ) links no mimalloc, so that ASan sees every
// allocation; there this does nothing.
//
//===----------------------------------------------------------------------===//
#include "Support/Allocator.h"

#ifndef EXIR_NO_MIMALLOC
#include <mimalloc.h>
#endif

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <new>

namespace exir {

void enableLargePageHeap() {
#ifndef EXIR_NO_MIMALLOC
  mi_option_set_enabled(mi_option_large_os_pages, true);
  // By default each thread's first segment (32 MiB) is committed 4 KiB at a
  // time, and those pages never become huge ones: at 100k nodes that was half
  // of exir-plan's and exir-emit's page faults (19.6k -> 8.8k, 29k -> 14k).
  mi_option_set(mi_option_eager_commit_delay, 0);
  // Freed pages are given back to the kernel after 25 ms by default, and the
  // next allocation then takes fresh pages that the kernel clears (~2 ms per
  // MB on the project's VMs). A tool runs for about a second, and exir-edge
  // frees and refills much of its graph between passes: with a second's delay
  // mlp-100k took 15.8k -> 12.8k page faults and 0.31 -> 0.19 s of system
  // time (medians of 6 alternating runs). Longer runs still give memory back.
  mi_option_set(mi_option_decommit_delay, 1000);
#endif
}

namespace {

#ifndef EXIR_NO_MIMALLOC
/// Asks for transparent huge pages on the mapping that holds `p` (this kernel
/// backs only madvised ranges with them), found in /proc/self/maps.
void adviseHugePagesAround(const void *p) {
  std::FILE *maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return;
  unsigned long long from = 0, to = 0;
  auto at = reinterpret_cast<uintptr_t>(p);
  char line[512];
  while (std::fgets(line, sizeof line, maps))
    if (std::sscanf(line, "%llx-%llx", &from, &to) == 2 && from <= at && at < to) {
      ::madvise(reinterpret_cast<void *>(from), size_t(to - from), MADV_HUGEPAGE); // a hint only
      break;
    }
  std::fclose(maps);
}
#endif

// Before the tools' static initializers allocate (registries, CLI11 apps): the
// options only apply to segments allocated after they are set.
[[gnu::constructor(101)]] void enableLargePageHeapEarly() {
  enableLargePageHeap();
#ifndef EXIR_NO_MIMALLOC
  // mimalloc maps the main thread's first segment (32 MiB) while it starts,
  // before the options above are set, so that one was not advised: its 4 KiB
  // faults were nearly all of a stage's page faults (exir-edge llama-100k:
  // 8.6k).
  void *probe = mi_malloc(16);
  adviseHugePagesAround(probe);
  mi_free(probe);
#endif
}

} // namespace

void throwBadAllocOnExhaustion() {
#ifndef EXIR_NO_MIMALLOC
  // mimalloc's own "out of memory" message would be a second line on stderr.
  mi_option_disable(mi_option_show_errors);
#endif
}

} // namespace exir

#ifndef EXIR_NO_MIMALLOC
// Debian builds mimalloc as C: its operator new cannot throw, and it cannot see
// our new_handler either (it asks a hidden weak stub), so when memory runs out
// it calls abort() and the tool dies of SIGABRT. These replacements, linked
// into every tool with this file (they take precedence over libmimalloc's),
// allocate from mimalloc and follow the standard: call the new_handler, or
// throw std::bad_alloc, which runTool reports as "out of memory" (exit 1).
// operator delete stays mimalloc's; the nothrow forms already return null.
namespace {
// mimalloc gives a block past 16 MiB a mapping of its own and advises it for
// huge pages only when its size is a multiple of 2 MiB (a 19 MB tensor table
// was not, and took 4.6k faults of 4 KiB where 10 of 2 MiB do). From 4 MiB up
// the whole 2 MiB pages inside the block are advised here: one system call
// per such block, and they are few (node lists, tables, parser buffers).
constexpr std::size_t kAdviseMinBytes = std::size_t(4) << 20;
constexpr uintptr_t kHugePage = uintptr_t(2) << 20;

void adviseHugePages(void *p, std::size_t size) {
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + size) & ~(kHugePage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE); // a hint only
}

void *allocateOrThrow(std::size_t size, std::size_t alignment) {
  for (;;) {
    void *p = alignment ? mi_malloc_aligned(size, alignment) : mi_malloc(size);
    if (p && size >= kAdviseMinBytes) adviseHugePages(p, size);
    if (p) return p;
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}
} // namespace

void *operator new(std::size_t size) { return allocateOrThrow(size, 0); }
void *operator new[](std::size_t size) { return allocateOrThrow(size, 0); }
void *operator new(std::size_t size, std::align_val_t alignment) {
  return allocateOrThrow(size, static_cast<std::size_t>(alignment));
}
void *operator new[](std::size_t size, std::align_val_t alignment) {
  return allocateOrThrow(size, static_cast<std::size_t>(alignment));
}
#endif
