//===- Pte/SegmentSink.cpp - Stream padding and payloads, with holes -----===//
#include "Pte/SegmentSink.h"

#include "Support/Error.h"
#include "Support/FileIO.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

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

namespace {

/// A thread's share of the segment data: blobs [first, last) and the bytes
/// [start, end) they and the zeros before them (and, for the last run, after
/// them) cover, from the start of the segment data.
struct Run {
  size_t first, last;
  uint64_t start, end;
};

/// Consecutive blobs of about `runBytes` payload bytes each (a large blob is a
/// run of its own): 100k small constants are written in big pieces, a few
/// large weights are spread over the threads.
std::vector<Run> splitRuns(const std::vector<PlacedBlob> &blobs, uint64_t total, uint64_t runBytes) {
  std::vector<Run> runs;
  Run run{0, 0, 0, 0};
  uint64_t bytes = 0;
  for (size_t i = 0; i < blobs.size(); ++i) {
    bytes += blobs[i].blob->size();
    if (bytes >= runBytes || i + 1 == blobs.size()) {
      run.last = i + 1;
      run.end = i + 1 == blobs.size() ? total : blobs[i].offset + blobs[i].blob->size();
      runs.push_back(run);
      run = Run{i + 1, i + 1, run.end, run.end};
      bytes = 0;
    }
  }
  return runs;
}

/// SegmentSink's work for one run, written at absolute offsets: small chunks
/// collected into a buffer, large ones (a gathered band of a weight, a piece
/// of a file) written from the producer's memory; with `sparse`, all-zero
/// chunks and gaps left as holes.
class PositionalSink {
public:
  PositionalSink(const PositionalOutput &out, bool sparse, uint64_t at) : out_(out), sparse_(sparse), at_(at) {}

  uint64_t at() const { return at_; }
  void write(std::string_view bytes) {
    if (sparse_ && allZero(bytes)) {
      skip(bytes.size());
      return;
    }
    if (bytes.size() >= kDirectBytes) {
      flush();
      out_.writeAt(at_, bytes.data(), bytes.size());
      at_ += bytes.size();
      return;
    }
    if (pending_.empty()) pendingAt_ = at_;
    pending_.append(bytes);
    at_ += bytes.size();
    if (pending_.size() >= kDirectBytes) flush();
  }
  void zeros(uint64_t count) {
    if (sparse_) {
      skip(count);
      return;
    }
    for (; count > 0;) {
      size_t n = size_t(std::min<uint64_t>(count, sizeof kZeroBlock));
      write(std::string_view(kZeroBlock, n));
      count -= n;
    }
  }
  void flush() {
    if (pending_.empty()) return;
    out_.writeAt(pendingAt_, pending_.data(), pending_.size());
    pending_.clear();
  }

private:
  static constexpr size_t kDirectBytes = size_t(256) << 10;
  void skip(uint64_t count) {
    flush();
    at_ += count;
  }

  const PositionalOutput &out_;
  bool sparse_;
  uint64_t at_;
  std::string pending_;
  uint64_t pendingAt_ = 0;
};

void writeSequentially(std::ostream &out, uint64_t total, const std::vector<PlacedBlob> &blobs,
                       const SegmentDataOptions &options) {
  SegmentSink sink(out, options.sparse, total, options.progress);
  uint64_t position = 0;
  for (const PlacedBlob &placed : blobs) {
    sink.zeros(placed.offset - position);
    sink.blob(*placed.blob);
    position = placed.offset + placed.blob->size();
  }
  sink.zeros(total - position);
  sink.finish();
}

} // namespace

void writeSegmentData(std::ostream &out, uint64_t total, const std::vector<PlacedBlob> &blobs,
                      const SegmentDataOptions &options) {
  uint64_t payload = 0;
  for (const PlacedBlob &placed : blobs) payload += placed.blob->size();
  unsigned threads = options.threads ? options.threads : std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  std::optional<PositionalOutput> output;
  // Even one thread writes large payloads itself, at their offsets: handing
  // them to the stream's writer thread made the kernel's copy into the file's
  // pages several times slower on these virtual machines (the bytes were
  // written by one vCPU and read by the other: 2.1 s against 1.2 s for 1.9 GB).
  if (!blobs.empty() && payload >= options.directMinBytes) output = PositionalOutput::of(out);
  if (!output) {
    writeSequentially(out, total, blobs, options);
    return;
  }
  // Runs of a sixteenth of the payload per thread (at most 8 MiB): enough of
  // them that threads finishing at different times even out.
  uint64_t runBytes = std::clamp<uint64_t>(payload / (uint64_t(threads) * 16), 1, uint64_t(8) << 20);
  std::vector<Run> runs = splitRuns(blobs, total, runBytes);
  uint64_t base = output->position();

  // Run 0 is the calling thread's: it reports progress, so it always writes
  // some of the data (helpers that took every run left the bar at 0 until the end).
  std::atomic<size_t> nextRun{1};
  std::atomic<uint64_t> done{0};
  // The earliest failing run so far; runs after it are not started, the ones
  // before it all run, so the error reported is the first one a single
  // thread would have met.
  std::atomic<size_t> firstFailed{SIZE_MAX};
  std::mutex errorMutex; // guards `error` and the stores to firstFailed
  std::exception_ptr error;
  uint64_t reported = 0; // the calling thread's last progress figure
  auto work = [&](bool reports) {
    ScopedFileCache files; // per thread: each keeps its own descriptors
    for (size_t r = reports ? 0 : nextRun.fetch_add(1);; r = nextRun.fetch_add(1)) {
      if (r >= runs.size() || r > firstFailed.load()) return;
      const Run &run = runs[r];
      try {
        PositionalSink sink(*output, options.sparse, base + run.start);
        auto advance = [&](uint64_t bytes) {
          if (bytes == 0) return;
          uint64_t now = done.fetch_add(bytes) + bytes;
          if (reports && options.progress) options.progress(reported = now, total);
        };
        for (size_t i = run.first; i < run.last; ++i) {
          uint64_t gap = base + blobs[i].offset - sink.at();
          sink.zeros(gap);
          advance(gap);
          blobs[i].blob->forEachExtent(
              [&](std::string_view chunk) {
                sink.write(chunk);
                advance(chunk.size());
              },
              [&](uint64_t count) {
                sink.zeros(count);
                advance(count);
              });
        }
        uint64_t tail = base + run.end - sink.at();
        sink.zeros(tail);
        advance(tail);
        sink.flush();
      } catch (...) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (r < firstFailed.load()) {
          error = std::current_exception();
          firstFailed = r;
        }
        return;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads && t < runs.size(); ++t) {
    try {
      helpers.emplace_back(work, false);
    } catch (const std::system_error &) {
      break; // no more threads: fewer do the work
    }
  }
  try {
    work(true);
  } catch (...) { // outside a run (no memory for the file cache): the helpers finish first
    for (std::thread &helper : helpers) helper.join();
    throw;
  }
  for (std::thread &helper : helpers) helper.join();
  if (error) std::rethrow_exception(error);
  output->finish(base + total);
  // The other threads may have written the last bytes: the bar ends full.
  if (options.progress && reported < total) options.progress(total, total);
}

} // namespace exir::pte
