//===- fuzz/FuzzBatched.h - Whole and batched reading must agree -*- C++ -*-===//
//
// readProgram may read a program's big containers in batches (Serde/JsonBatch.h)
// instead of one whole DOM. A target calls checkBatchedReading with a reader
// that returns the written text of the program it reads: whenever the whole
// read succeeds, the read with every named container in batches must succeed
// and give the same text, on one thread and on two (the containers' items
// then taken in chunks by both, Serde/Parallel.h); otherwise the target
// aborts (a crash to libFuzzer).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FuzzCommon.h"
#include "Serde/JsonBatch.h"
#include "Serde/Parallel.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace exir::fuzz {

template <typename Read> void checkBatchedReading(Read &&read) {
  std::string whole, batched;
  bool wholeRead = false, batchedRead = false;
  fuzzOne([&] {
    whole = read();
    wholeRead = true;
  });
  if (!wholeRead) return;
  json::setDeferMinBytes(1);
  for (size_t parallelFrom : {size_t(0), size_t(2)}) { // 0: the default (one thread at these sizes)
    json::setParallelMinItems(parallelFrom);
    batchedRead = false;
    fuzzOne([&] {
      batched = read();
      batchedRead = true;
    });
    if (!batchedRead || batched != whole) {
      std::fprintf(stderr, "reading in batches%s %s\n", parallelFrom ? " on two threads" : "",
                   batchedRead ? "gave another program" : "failed");
      std::abort();
    }
  }
  json::setParallelMinItems(0);
  json::setDeferMinBytes(0);
}

} // namespace exir::fuzz
