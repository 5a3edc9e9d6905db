//===- Pte/SegmentSink.cpp - Stream padding and payloads, with holes -----===//
#include "Pte/SegmentSink.h"

#include "Support/Error.h"

#include <algorithm>
#include <cstring>

namespace exir::pte {

namespace {
const char kZeroBlock[64 << 10] = {};

bool allZero(std::string_view bytes) {
  // memcmp against zeros: vectorized, unlike a byte loop (this sees every byte of the weights).
  for (size_t at = 0; at < bytes.size(); at += sizeof kZeroBlock) {
    size_t n = std::min(bytes.size() - at, sizeof kZeroBlock);
    if (std::memcmp(bytes.data() + at, kZeroBlock, n) != 0) return false;
  }
  return true;
}
} // namespace

void SegmentSink::flushHole() {
  if (hole_ == 0) return;
  out_.seekp(std::streamoff(hole_), std::ios::cur);
  if (!out_) throw Error("cannot seek in the output (sparse output needs a regular file)");
  hole_ = 0;
}

void SegmentSink::write(std::string_view bytes) {
  position_ += bytes.size();
  if (sparse_ && allZero(bytes)) {
    hole_ += bytes.size();
    return;
  }
  flushHole();
  out_.write(bytes.data(), std::streamsize(bytes.size()));
}

void SegmentSink::zeros(uint64_t count) {
  position_ += count;
  if (sparse_) {
    hole_ += count;
    return;
  }
  while (count > 0) {
    uint64_t n = std::min<uint64_t>(count, sizeof kZeroBlock);
    out_.write(kZeroBlock, std::streamsize(n));
    count -= n;
  }
}

void SegmentSink::blob(const BlobSource &blob) {
  // Holes of a sparse weight file are not read: they become holes here too (or zeros).
  blob.forEachExtent(
      [&](std::string_view chunk) {
        write(chunk);
        if (progress_) progress_(position_, total_);
      },
      [&](uint64_t count) {
        zeros(count);
        if (progress_) progress_(position_, total_);
      });
}

void SegmentSink::finish() {
  if (hole_ == 0) return;
  // Seek to the last byte of the hole and write it, so the file has its size.
  hole_ -= 1;
  flushHole();
  out_.put('\0');
}

} // namespace exir::pte
