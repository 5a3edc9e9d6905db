//===- Pte/PteWriter.h - Serialize a pte::Program to .pte bytes -*- C++ -*-===//
//
// Lays out a pte::Program exactly as pte-format.md §2 describes: flatbuffer with
// identifier ET12, the constant segment, the mutable-data segment, delegate blobs
// (as segments or inline), named-data segments, and the `eh00` extended header
// when any segment holds bytes. Output is deterministic: the same model always
// gives the same bytes. File-backed payloads are streamed in chunks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace exir::pte {

struct WriteOptions {
  /// Alignment of every segment start (and of segment_base_offset). Power of two.
  uint64_t segmentAlignment = 128;
  /// Padding between tensors inside the constant segment. Power of two.
  uint64_t constantAlignment = 16;
  /// force_align of inline delegate data (BackendDelegateInlineData.data). Power of two.
  uint64_t delegateAlignment = 16;
  /// Keep delegate blobs inside the flatbuffer instead of extracting segments.
  bool inlineDelegates = false;
  /// Called as segment bytes are streamed out: (bytes written so far, total
  /// segment bytes). Lets a tool show progress while large weights are copied.
  std::function<void(uint64_t written, uint64_t total)> progress;
  /// Skip zero bytes with seekp rather than write them (a sparse file for
  /// sparse weights). Only for a seekable, initially empty file stream.
  bool sparse = false;
  /// Threads that write the segment data (SegmentDataOptions::threads): 0 for
  /// one per core, 1 for the calling thread only.
  unsigned threads = 0;
};

/// Writes `program` as a .pte file. Throws exir::Error for invalid options (an
/// alignment that is not a power of two) or an inconsistent model (non-empty
/// placeholder, named-data alignment), or when a file-backed blob cannot be read.
/// program.layout is ignored; the layout is computed afresh.
void writePte(const Program &program, const WriteOptions &options, std::ostream &out);

/// writePte into a string (convenient for tests and small programs).
std::string writePteToString(const Program &program, const WriteOptions &options = {});

} // namespace exir::pte
