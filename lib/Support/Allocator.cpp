//===- Support/Allocator.cpp - Heap tuning for large programs -------------===//
//
// Every tool links mimalloc (Debian's libmimalloc, which replaces malloc/new
// when linked) and asks it for 2 MiB pages. Reading a 100k-node program builds
// ~500 MB of small objects; with 4 KiB pages the kernel's page-fault handling
// dominated on these machines (bench/json_bench.sh, 100k nodes: read 2.5 s
// with glibc malloc, 0.48 s with mimalloc and large pages).
//
// The fuzz build (EXIR_FUZZ) links no mimalloc, so that ASan sees every
// allocation; there this does nothing.
//
//===----------------------------------------------------------------------===//
#include "Support/Allocator.h"

#ifndef EXIR_NO_MIMALLOC
#include <mimalloc.h>
#endif

namespace exir {

void enableLargePageHeap() {
#ifndef EXIR_NO_MIMALLOC
  mi_option_set_enabled(mi_option_large_os_pages, true);
#endif
}

} // namespace exir
