//===- Plan/AlgorithmGreedy.cpp - Upstream ExecuTorch's greedy planner ----===//
//
// Reproduces, offset for offset, the placement of upstream's default planner
// (`greedy` in exir/memory_planning.py; pte-format.md §5.5), so that our
// .pte files match the upstream exporter's. Its rule, per arena:
//
//  * Order: by aligned size, largest first. Upstream builds an ascending list
//    with a right-biased bisect insert in collection order and reverses it,
//    so among equal sizes the unit collected LAST comes first.
//  * Shared objects: the arena is a list of "objects" (buckets), each sized by
//    the first unit put into it; objects never grow.
//    1. The first object none of whose allocations overlaps the unit in time
//       takes the unit at offset 0 of the object.
//    2. Otherwise (only with allow_overlapping_allocations, the default) the
//       first object where M + size <= object size takes it at offset M,
//       M = max end offset (offset + size) of the object's allocations that
//       overlap the unit in time; objects with M == 0 are skipped.
//    3. Otherwise a new object sized to the unit is appended.
//  * Materialization: objects are laid end to end in creation order; the
//    arena size is the sum of the object sizes.
//
// Golden (add(x, y) on [1] floats, §3.2): x, y and out take 16 bytes each and
// all overlap in time; out is collected last, so it comes first: out at 0,
// y at 16, x at 32, arena 48.
//
// Upstream scans every allocation of every object for each unit, which is
// quadratic. We keep the exact same decisions with two indexes:
//  * for step 1, a bitset per time point of the objects occupied then (plus
//    one per 64 points for long lifetimes); OR-ing them over the unit's
//    lifetime gives the first free object directly;
//  * for step 2, the placed units that overlap the unit in time (an
//    OverlapIndex with the placed units active) give the max end offset per
//    object in one pass. Every allocation already placed is at least as
//    large as the unit (sizes only decrease), so M >= size and an object
//    smaller than 2 * size cannot qualify; object sizes never increase along
//    the list, so the scan stops at the first such object.
//  * Before that query, step 2 tries each object's running max end offset
//    (top) as M: it is exact when a unit reaching the top overlaps the unit
//    in time (or the top is 0). Long-lived units (KV caches, tensors that
//    live to the end) overlap nearly everything, and each of them walked
//    every placed unit in the query (quadratic on decoders); the tops are
//    one sequential pass over the objects. The query runs only when an
//    object before the decision has its top unit elsewhere in time.
//
//===----------------------------------------------------------------------===//
#include "Plan/Placement.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <utility>
#include <vector>

namespace exir::plan::detail {

namespace {

/// Which objects hold an allocation at each time point, as bitsets, with a
/// second level per 64 time points so long lifetimes cost O(length / 64):
/// `any` has the objects live anywhere in a 64-point chunk, `full` those live
/// during all of it (then not repeated in the per-point bits). Chunk rows are
/// stored flat, `words_` 64-bit words each, and re-laid out when the number
/// of objects outgrows them. Per-point rows are sparse (the nonzero words
/// only): a point holds the ends of a few lifetimes, while dense rows cost
/// points x objects / 8 bytes (5.5 GB for a 300k-node decoder).
class Occupancy {
public:
  explicit Occupancy(uint32_t span) : fine_(span) {
    size_t chunks = span / 64 + 1;
    while (leaves_ < chunks) leaves_ *= 2;
  }

  size_t words() const { return words_; }

  /// The first object live at no point of [start, end] (words() * 64 when
  /// every one of them is). `seen` and `rows` are scratch space.
  size_t firstFree(uint32_t start, uint32_t end, std::vector<uint64_t> &seen,
                   std::vector<const uint64_t *> &rows) const {
    if (words_ == 0) // nothing marked yet: the rows are empty vectors
      return 0;
    seen.assign(words_, 0);
    rows.clear();
    collect(start, end, seen.data(), rows);
    // OR the rows a cache line at a time and stop at the first free bit:
    // the first free object is usually early, and OR-ing whole rows cost
    // O(objects) per block (superlinear on large programs).
    constexpr size_t Step = 8;
    for (size_t w0 = 0; w0 < words_; w0 += Step) {
      size_t w1 = std::min(words_, w0 + Step);
      uint64_t acc[Step];
      std::copy(seen.begin() + w0, seen.begin() + w1, acc);
      for (const uint64_t *bits : rows)
        for (size_t w = w0; w < w1; ++w)
          acc[w - w0] |= bits[w];
      for (size_t w = w0; w < w1; ++w)
        if (~acc[w - w0] != 0)
          return w * 64 + size_t(std::countr_zero(~acc[w - w0]));
    }
    return words_ * 64;
  }

private:
  /// ORs the per-point bits of [start, end] into `seen` (words() words) and
  /// appends the chunk rows to OR into it to `rows`.
  void collect(uint32_t start, uint32_t end, uint64_t *seen, std::vector<const uint64_t *> &rows) const {
    uint64_t c0 = (uint64_t(start) + 63) / 64, c1End = (uint64_t(end) + 1) / 64; // whole chunks [c0, c1End)
    bool whole = c0 < c1End;
    uint64_t lastChunk = UINT64_MAX;
    auto point = [&](uint64_t t) {
      for (const auto &[word, bits] : fine_[t])
        seen[word] |= bits;
      if (t / 64 != lastChunk) { // objects live during all of t's chunk
        lastChunk = t / 64;
        for (size_t v = leaves_ + lastChunk; v >= 1; v /= 2) rows.push_back(row(full_, v));
      }
    };
    uint64_t headEnd = whole ? std::min<uint64_t>(end, c0 * 64 - 1) : end;
    for (uint64_t t = start; t <= headEnd && (whole ? t < c0 * 64 : true); ++t) point(t);
    if (!whole) return;
    // Whole chunks: `any` of the canonical nodes, `full` of the nodes above them
    // (on the paths from the first and the last chunk to the root).
    for (size_t l = leaves_ + c0, r = leaves_ + c1End; l < r; l /= 2, r /= 2) {
      if (l & 1) rows.push_back(row(any_, l++));
      if (r & 1) rows.push_back(row(any_, --r));
    }
    for (size_t edge : {leaves_ + c0, leaves_ + c1End - 1})
      for (size_t v = edge / 2; v >= 1; v /= 2) rows.push_back(row(full_, v));
    lastChunk = UINT64_MAX;
    for (uint64_t t = c1End * 64; t <= end; ++t) point(t);
  }

public:
  void mark(uint32_t start, uint32_t end, size_t object) {
    if (object / 64 >= words_)
      grow(object / 64 + 1);
    uint64_t bit = uint64_t(1) << (object % 64);
    size_t word = object / 64;
    // v and every node above it. A node holding the bit has it on every
    // ancestor already, so the walk stops there: the points of a lifetime
    // share their chunk's leaf, and walking to the root from each of them
    // (a cache miss per level) was 40% of the planner on a 300k-node decoder.
    auto markAny = [&](size_t v) {
      for (; v >= 1 && !(any_[v * words_ + word] & bit); v /= 2) any_[v * words_ + word] |= bit;
    };
    uint64_t c0 = (uint64_t(start) + 63) / 64, c1End = (uint64_t(end) + 1) / 64;
    bool whole = c0 < c1End;
    auto point = [&](uint64_t t) {
      markFine(fine_[t], uint32_t(word), bit);
      markAny(leaves_ + t / 64);
    };
    for (uint64_t t = start; t <= end && (whole ? t < c0 * 64 : true); ++t) point(t);
    if (!whole) return;
    for (size_t l = leaves_ + c0, r = leaves_ + c1End; l < r; l /= 2, r /= 2) {
      if (l & 1) {
        full_[l * words_ + word] |= bit;
        markAny(l++);
      }
      if (r & 1) {
        --r;
        full_[r * words_ + word] |= bit;
        markAny(r);
      }
    }
    for (uint64_t t = c1End * 64; t <= end; ++t) point(t);
  }

private:
  using SparseRow = std::vector<std::pair<uint32_t, uint64_t>>; // (word, bits), nonzero words

  static void markFine(SparseRow &row, uint32_t word, uint64_t bit) {
    for (auto &[w, bits] : row)
      if (w == word) {
        bits |= bit;
        return;
      }
    row.emplace_back(word, bit);
  }
  const uint64_t *row(const std::vector<uint64_t> &rows, size_t node) const { return rows.data() + node * words_; }
  void grow(size_t atLeast) {
    size_t words = std::max(atLeast, 2 * words_);
    auto relayout = [&](std::vector<uint64_t> &rows, size_t count) {
      std::vector<uint64_t> wider(count * words, 0);
      for (size_t r = 0; r < count && words_ > 0; ++r)
        std::copy_n(rows.begin() + r * words_, words_, wider.begin() + r * words);
      rows.swap(wider);
    };
    relayout(any_, 2 * leaves_);
    relayout(full_, 2 * leaves_);
    words_ = words;
  }
  size_t leaves_ = 1, words_ = 0;
  std::vector<SparseRow> fine_;
  // Segment trees over the 64-point chunks (node 1 is the root, leaf of chunk
  // c is leaves_ + c), words_ words per node: `full` has the objects live
  // during all of a node's chunks (marked on the canonical nodes of a
  // lifetime), `any` those live anywhere in them.
  std::vector<uint64_t> any_, full_;
};

struct SharedObject {
  uint64_t size = 0;
  uint64_t offset = 0; // set when materializing
};

} // namespace

/// Upstream ExecuTorch's greedy memory planner: largest first (equal sizes:
/// last collected first); each unit goes to offset 0 of the first object with
/// no lifetime overlap, else (allowOverlappingAllocations) to the first object
/// with room above the max end offset of its overlapping allocations, else to
/// a new object of its own size; objects are laid end to end in creation
/// order. Exactly reproduces upstream's offsets and arena size.
ArenaResult placeGreedy(const std::vector<Block> &blocks, bool allowOverlappingAllocations) {
  size_t n = blocks.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (blocks[a].size != blocks[b].size)
      return blocks[a].size > blocks[b].size;
    return a > b; // equal sizes: collected last goes first
  });

  std::vector<SharedObject> objects;
  Occupancy occupancy(timeSpan(blocks));
  OverlapIndex placed(blocks); // active = already placed
  std::vector<uint32_t> neighbours;
  std::vector<uint64_t> maxEnd; // per object, for step 2; zero outside it
  std::vector<uint32_t> touched;   // the neighbours' objects for the current block
  std::vector<uint64_t> isTouched; // the same as a bitset over the objects
  std::vector<uint32_t> objectOf(n);
  std::vector<uint64_t> offsetInObject(n);
  std::vector<uint64_t> seen;
  std::vector<const uint64_t *> rows;
  // Max end offset of each object's placed units, and the extreme lifetime
  // ends of the placed units, for the all-overlapping case of step 2.
  std::vector<uint64_t> objectTop;
  std::vector<uint32_t> topStart, topEnd; // lifetime of a unit reaching the top

  for (uint32_t b : order) {
    const Block &block = blocks[b];
    // Step 1: the first object with no allocation live during the block.
    size_t picked = std::min(occupancy.firstFree(block.start, block.end, seen, rows), objects.size());
    uint64_t offset = 0;
    // Step 2: the first object with room above the overlapping allocations.
    bool exact = true;
    if (picked == objects.size() && allowOverlappingAllocations) {
      // The scan below with M = top while that is exact. Every object has
      // an overlapping unit here (step 1 failed), so all are touched.
      for (size_t o = 0; o < objects.size(); ++o) {
        const SharedObject &object = objects[o];
        if (object.size - block.size < block.size)
          break;
        if (objectTop[o] == 0)
          continue; // M = 0 whichever units overlap
        if (topStart[o] > block.end || topEnd[o] < block.start) {
          exact = false;
          break;
        }
        if (objectTop[o] + block.size <= object.size) {
          picked = o;
          offset = objectTop[o];
          break;
        }
      }
    }
    if (!exact) {
      neighbours.clear();
      placed.collectActive(block.start, block.end, neighbours);
      // Only the neighbours' objects have M > 0: visit those in list order
      // (a bitset over the objects) instead of every object. maxEnd and
      // isTouched are all zeros between blocks.
      maxEnd.resize(objects.size(), 0);
      isTouched.resize((objects.size() + 63) / 64, 0);
      touched.clear();
      for (uint32_t other : neighbours) {
        uint32_t o = objectOf[other];
        if (!(isTouched[o / 64] >> (o % 64) & 1)) {
          isTouched[o / 64] |= uint64_t(1) << (o % 64);
          touched.push_back(o);
        }
        maxEnd[o] = std::max(maxEnd[o], offsetInObject[other] + blocks[other].size);
      }
      bool stop = false;
      for (size_t w = 0; w < isTouched.size() && !stop; ++w)
        for (uint64_t bits = isTouched[w]; bits != 0 && !stop; bits &= bits - 1) {
          size_t o = w * 64 + size_t(std::countr_zero(bits));
          const SharedObject &object = objects[o];
          if (object.size - block.size < block.size) {
            stop = true; // see the file comment: no later object can qualify
          } else if (maxEnd[o] > 0 && maxEnd[o] + block.size <= object.size) {
            picked = o;
            offset = maxEnd[o];
            stop = true;
          }
        }
      for (uint32_t o : touched) {
        maxEnd[o] = 0;
        isTouched[o / 64] = 0;
      }
    }
    // Step 3: a new object of the block's size.
    if (picked == objects.size()) {
      objects.push_back({block.size, 0});
      objectTop.push_back(0);
      topStart.push_back(0);
      topEnd.push_back(0);
    }
    if (offset + block.size > objectTop[picked]) {
      objectTop[picked] = offset + block.size;
      topStart[picked] = block.start;
      topEnd[picked] = block.end;
    }

    objectOf[b] = static_cast<uint32_t>(picked);
    offsetInObject[b] = offset;
    if (allowOverlappingAllocations)
      placed.activate(b);
    occupancy.mark(block.start, block.end, picked);
  }

  ArenaResult result;
  for (SharedObject &object : objects) {
    object.offset = result.extent;
    result.extent += object.size;
  }
  result.offsets.resize(n);
  for (size_t b = 0; b < n; ++b)
    result.offsets[b] = objects[objectOf[b]].offset + offsetInObject[b];
  return result;
}

} // namespace exir::plan::detail
