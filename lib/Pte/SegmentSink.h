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

} // namespace exir::pte
