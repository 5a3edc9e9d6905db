//===- Pte/SegmentSink.h - Stream padding and payloads, with holes -*- C++ -*-===//
//
// Writes the segment part of a .pte or .ptd. With `sparse`, runs of zero bytes
// (padding, and all-zero chunks of payloads) are skipped with seekp instead of
// written, so a file of mostly zeros becomes a sparse file on filesystems that
// support holes; the bytes read back are the same. Needs a seekable stream.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"

#include <cstdint>
#include <functional>
#include <ostream>
#include <string_view>
#include <vector>

namespace exir::pte {

class SegmentSink {
public:
  /// `progress` (optional) gets (bytes since the sink's start, `total`) as
  /// payloads stream.
  SegmentSink(std::ostream &out, bool sparse, uint64_t total,
              std::function<void(uint64_t, uint64_t)> progress = {})
      : out_(out), sparse_(sparse), total_(total), progress_(std::move(progress)) {}

  void write(std::string_view bytes);
  void zeros(uint64_t count);
  /// Streams a payload in chunks (reporting progress).
  void blob(const BlobSource &blob);
  /// Materializes a trailing hole (the file must end at the right size).
  void finish();

private:
  void flushHole();

  std::ostream &out_;
  bool sparse_;
  uint64_t total_;
  std::function<void(uint64_t, uint64_t)> progress_;
  uint64_t hole_ = 0;
  uint64_t position_ = 0; // bytes since the sink's start, holes included
};

/// A payload and where it starts, in bytes from the start of the segment data.
struct PlacedBlob {
  uint64_t offset = 0;
  const BlobSource *blob = nullptr;
};

struct SegmentDataOptions {
  bool sparse = false; // see SegmentSink
  /// (bytes since the start of the segment data, total), called on the
  /// calling thread only.
  std::function<void(uint64_t, uint64_t)> progress;
  /// Threads that make and write payloads, the calling thread included; 0:
  /// one per core, at most 4 (the kernel's copy into the file's pages takes
  /// the file's lock, so more cores would mostly wait for it).
  unsigned threads = 0;
  /// Below this many payload bytes they go through the stream like the rest
  /// of the file (a SegmentSink): settling the stream and starting threads
  /// costs more than it saves.
  uint64_t directMinBytes = uint64_t(64) << 20;
};

/// Writes the segment data: `blobs` (ascending, not overlapping) at their
/// offsets and zeros between and after them, `total` bytes in all, as a
/// SegmentSink would. Where `out` takes writes at offsets (PositionalOutput)
/// and the payloads are large, runs of consecutive payloads are made and
/// written straight into the file (pwrite) by `threads` threads at once; the
/// output's bytes are the same. exir-emit gathers, transposes and copies 2 GB
/// of weights: 2.1 s through the stream, 1.2 s written directly by one
/// thread, 0.8-1.0 s by two (llama32-2gb-dense, 2 cores).
void writeSegmentData(std::ostream &out, uint64_t total, const std::vector<PlacedBlob> &blobs,
                      const SegmentDataOptions &options);

} // namespace exir::pte
