//===- fuzz/FuzzBatched.h - Whole and batched reading must agree -*- C++ -*-===//
//
// readProgram may read a program's big containers in batches (Serde/JsonBatch.h)
// instead of one whole DOM. A target calls checkBatchedReading with a reader
// that returns the written text of the program it reads: whenever the whole
// read succeeds, the read with every named container in batches must succeed
// and give the same text; otherwise the target aborts (a crash to libFuzzer).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FuzzCommon.h"
#include "Serde/JsonBatch.h"

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
  fuzzOne([&] {
    batched = read();
    batchedRead = true;
  });
  json::setDeferMinBytes(0);
  if (!batchedRead || batched != whole) {
    std::fprintf(stderr, "reading in batches %s\n", batchedRead ? "gave another program" : "failed");
    std::abort();
  }
}

} // namespace exir::fuzz
