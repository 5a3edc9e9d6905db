//===- Plan/Placement.h - IR-independent memory placement -------*- C++ -*-===//
//
// The core of memory planning, free of any graph: a list of tensors (size,
// inclusive lifetime in node indices, arena) goes in, an offset per tensor and
// a size per arena come out. The IR-level passes compute lifetimes from the
// graph (pte-format.md §5.3) and call planMemory(); exir-plan reports and
// draws the result with lowerBound(), PlanVerifier.h and PlanRender.h.
//
// Algorithms (all deterministic; ties are broken by item index):
//   naive           bump allocation per arena in item order, no reuse.
//   greedy          upstream ExecuTorch's default planner, reproduced exactly
//                   (see AlgorithmGreedy.cpp and §5.5 of the spec).
//   greedy-by-size  TFLite-style: largest first, each at the best-fitting gap
//                   among the already placed tensors whose lifetimes overlap.
//   best-fit        a simulated allocator run in program order that takes the
//                   smallest free gap (best fit) when a tensor becomes live.
//   local-search    compacts the placements of greedy-by-size, greedy and
//                   best-fit (every block moved down as far as it goes), adds
//                   touching-perimeter placements (long-lived tensors first,
//                   each where it touches its neighbours, the floor or the
//                   ceiling most; AlgorithmContactFit.cpp), then hill-climbs
//                   over the order in which greedy-by-size's gap rule places
//                   the tensors. Arenas above PlanOptions::localSearchMaxItems
//                   storage units skip the climb and compact only
//                   greedy-by-size's placement and the touching ones.
//   best            runs greedy, greedy-by-size, best-fit, local-search and
//                   naive and keeps the smallest total; on ties the earliest
//                   in that order wins, so `best` equals upstream's greedy
//                   whenever nothing beats it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exir::plan {

/// One tensor to place.
struct PlanItem {
  std::string name;       // value name, for reports and diagnostics
  uint64_t size = 0;      // bytes, unaligned
  uint32_t start = 0;     // lifetime, inclusive node indices
  uint32_t end = 0;
  uint32_t memId = 1;     // arena (>= 1)
  /// Items with the same non-negative shareGroup are one storage (views,
  /// in-place results, aliases): they get the same offset. The storage is
  /// as large as the largest member and lives over the union of the members'
  /// lifetimes. All members must name the same arena.
  int32_t shareGroup = -1;
};

/// The result: one offset per item (same index) and the size of each arena.
struct Placement {
  std::vector<uint64_t> offsets;    // byte offset of item i inside its arena
  std::vector<uint64_t> arenaSizes; // index = memId; [0] = 0; at least {0, 0}
  std::string algorithm;            // the algorithm that produced the offsets
                                    // (for `best`: the one that won)
};

struct PlanOptions {
  /// Every offset is a multiple of it and every item takes
  /// ceil(size / alignment) * alignment bytes. Must be a power of two.
  uint64_t alignment = 16;
  /// greedy only: upstream's allow_overlapping_allocations (default True),
  /// i.e. step 2 of its placement rule.
  bool allowOverlappingAllocations = true;
  /// Bytes reserved at the start of arena k (index = memId), e.g. what
  /// control-flow submodules use (upstream's input_mem_buffer_sizes). Every
  /// entry must be a multiple of the alignment. Missing entries are 0.
  std::vector<uint64_t> arenaBase;
  /// Added to the size of every arena that holds at least one item (upstream
  /// adds 64 bytes when the graph has an XNNPACK delegate).
  uint64_t extraPadding = 0;
  /// local-search runs its hill climb only on arenas with at most this many
  /// storage units; larger arenas only get greedy-by-size's placement
  /// compacted, so `best` stays fast on very large graphs.
  size_t localSearchMaxItems = 4000;
};

/// Names accepted by planMemory, in the order `best` prefers them on ties,
/// followed by "best" itself.
const std::vector<std::string> &algorithmNames();
bool isKnownAlgorithm(std::string_view name);

/// Places every item. Throws exir::Error for an unknown algorithm, an
/// alignment that is not a power of two, a lifetime that ends before it
/// starts, memId 0, share-group members in different arenas, or an arena base
/// that is not aligned.
Placement planMemory(const std::vector<PlanItem> &items, std::string_view algorithm,
                     const PlanOptions &options = {});

/// Max over time of the sum of the aligned sizes of the live storage units of
/// arena memId (share groups counted once, as planMemory sees them). No
/// placement of that arena can be smaller (arena base and padding excluded).
uint64_t lowerBound(const std::vector<PlanItem> &items, uint32_t memId, uint64_t alignment = 16);
/// lowerBound for every arena: index = memId, [0] = 0, at least {0, 0}.
std::vector<uint64_t> lowerBounds(const std::vector<PlanItem> &items, uint64_t alignment = 16);

/// Sum of all arena sizes.
uint64_t totalBytes(const Placement &placement);

/// Throws exir::Error "alignment 24 is not a power of two" (also for 0).
void checkAlignment(uint64_t alignment);
/// ceil(size / alignment) * alignment; alignment must be a power of two.
uint64_t alignUp(uint64_t size, uint64_t alignment);

//===----------------------------------------------------------------------===//
// Internal interface between Placement.cpp and the Algorithm*.cpp files.
//===----------------------------------------------------------------------===//
namespace detail {

/// One storage unit of one arena: an item, or a share group merged.
struct Block {
  uint64_t size = 0;       // aligned bytes
  uint32_t start = 0;      // lifetime in compressed time (rank of the node
  uint32_t end = 0;        // index among all endpoints of the arena), inclusive
};

/// Placement of one arena's blocks: offsets from the arena's start (before
/// any base reservation) and the bytes the arena needs for them.
struct ArenaResult {
  std::vector<uint64_t> offsets;
  uint64_t extent = 0;
};

// Blocks are always given in collection order (by their first item's index);
// that index is the tie breaker everywhere.
ArenaResult placeNaive(const std::vector<Block> &blocks);
ArenaResult placeGreedy(const std::vector<Block> &blocks, bool allowOverlappingAllocations);
ArenaResult placeGreedyBySize(const std::vector<Block> &blocks);
/// The order greedy-by-size places blocks in: largest first, then longest
/// lifetime, then collection order.
std::vector<uint32_t> greedyBySizeOrder(const std::vector<Block> &blocks);
ArenaResult placeBestFit(const std::vector<Block> &blocks);
/// `starts`: placements of the same blocks by other algorithms to improve
/// on (compacted, and kept if the search finds nothing better).
ArenaResult placeLocalSearch(const std::vector<Block> &blocks, size_t maxBlocks,
                             const std::vector<ArenaResult> &starts);

class OverlapIndex;

/// Places the blocks in `order`, each at the end of a free gap below
/// `ceiling` where it touches placed neighbours, the floor or the ceiling
/// longest (AlgorithmContactFit.cpp); a block that fits nowhere below the
/// ceiling goes to the lowest gap that holds it and raises the ceiling.
/// Uses (and resets) the active marks of `index`.
ArenaResult placeContactFit(const std::vector<Block> &blocks, const std::vector<uint32_t> &order,
                            OverlapIndex &index, uint64_t ceiling);

/// Max over time of the sum of the sizes of live blocks.
uint64_t blockLowerBound(const std::vector<Block> &blocks);
/// Number of distinct time points (max end + 1) of compressed blocks.
uint32_t timeSpan(const std::vector<Block> &blocks);

/// Index answering "which blocks' lifetimes intersect [s, e]" in about
/// O(k + log n) per length class: blocks are bucketed by
/// floor(log2(lifetime length)); inside a bucket, sorted by start, only the
/// blocks starting in [s - longest, e] are scanned, and at least the ones
/// starting in [s - shortest, e] overlap. Blocks can also be marked active
/// (placed), and collectActive() then skips the inactive ones 64 at a time.
class OverlapIndex {
public:
  explicit OverlapIndex(const std::vector<Block> &blocks);
  /// Appends the index of every block whose lifetime intersects [start, end]
  /// (including a block equal to the query) to out, in no particular order.
  void collect(uint32_t start, uint32_t end, std::vector<uint32_t> &out) const;
  /// The same, restricted to active blocks.
  void collectActive(uint32_t start, uint32_t end, std::vector<uint32_t> &out) const;
  void activate(uint32_t block);
  void deactivateAll();

private:
  struct LengthClass {
    uint32_t longest = 0;          // max (end - start) in the class
    std::vector<uint32_t> starts;  // sorted by (start, block index)
    std::vector<uint32_t> ends;    // same order
    std::vector<uint32_t> blocks;  // same order
    std::vector<uint64_t> active;  // bit per position
    std::vector<uint32_t> chunk;   // [k] = first position with start >= 64 k
  };
  size_t lowerPosition(const LengthClass &cls, uint32_t time) const;
  template <bool OnlyActive>
  void scan(uint32_t start, uint32_t end, std::vector<uint32_t> &out) const;
  std::vector<LengthClass> classes_;
  std::vector<uint8_t> classOf_;
  std::vector<uint32_t> positionOf_;
};

/// Re-places every block, in the order of its current offset, at the lowest
/// offset where it fits among the blocks already re-placed that overlap it
/// in time ("gravity"). A block never moves up (its old offset is always
/// free then), so the placement stays valid and the extent never grows; the
/// extent is recomputed. Returns true if anything moved.
bool compactDown(const std::vector<Block> &blocks, OverlapIndex &index, ArenaResult &result);

/// Sorts byte ranges [lo, hi) by lo. The order among equal lo is unspecified;
/// the gap scans that use it give the same answer for any such order.
void sortByLow(std::vector<std::pair<uint64_t, uint64_t>> &ranges);

/// The placed blocks that live long, kept out of the OverlapIndex. A model's
/// mutable buffers (a KV cache of 3,000 tensors) live over the whole time
/// span and their updated values most of it; listed among the neighbours of
/// every block, they made each gap scan sort thousands of ranges. Here the
/// blocks over the whole span are one union of byte ranges (the scans see
/// only where the busy bytes are, so the union gives the same gaps as every
/// range; zero-sized blocks are not whole: inside a gap they split it), and
/// the other long ones a list sorted by offset, filtered by time per query.
class LongLivedBlocks {
public:
  explicit LongLivedBlocks(const std::vector<Block> &blocks);
  /// Whether block b is kept here (it then must not be activated in the index).
  bool tracks(uint32_t b) const { return kind_[b] != Short; }
  /// Adds tracked block b, placed at `offset`.
  void add(uint32_t b, uint64_t offset);
  void clear();
  /// The byte ranges of the added blocks that overlap [start, end] in time,
  /// sorted by their start; zero-sized ones left out if `skipEmpty`.
  void collect(uint32_t start, uint32_t end, bool skipEmpty, std::vector<std::pair<uint64_t, uint64_t>> &out) const;
  const std::vector<std::pair<uint64_t, uint64_t>> &whole() const { return whole_; }

private:
  enum Kind : uint8_t { Short, Long, Whole };
  struct Entry {
    uint64_t lo, hi;
    uint32_t start, end;
  };
  const std::vector<Block> &blocks_;
  std::vector<uint8_t> kind_;
  std::vector<std::pair<uint64_t, uint64_t>> whole_; // sorted, disjoint, not touching
  std::vector<Entry> long_;                          // sorted by lo
};

/// The placement rule shared by greedy-by-size and local-search: given the
/// byte ranges [lo, hi) of the already placed blocks that overlap a block in
/// time, returns the start of the smallest gap that holds `size` bytes
/// (lowest offset on ties), or the top of those ranges when no gap fits.
/// Sorts `busy`.
uint64_t bestFitOffset(std::vector<std::pair<uint64_t, uint64_t>> &busy, uint64_t size);
/// The same for `block`, whose neighbours are `busy` and those in `tracked`;
/// `scratch` is working space.
uint64_t bestFitOffset(std::vector<std::pair<uint64_t, uint64_t>> &busy, const Block &block,
                       const LongLivedBlocks &tracked, std::vector<std::pair<uint64_t, uint64_t>> &scratch);

} // namespace detail
} // namespace exir::plan
