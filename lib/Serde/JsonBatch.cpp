//===- Serde/JsonBatch.cpp - Big JSON containers read in batches ----------===//
//
// The scan is a plain loop over the skeleton's text that jumps across strings
// with memchr: it tracks the nesting and the keys that lead to the current
// container. A container a pattern names is crossed 64 bytes at a time
// (scanContainer): bit masks of its quotes, brackets and commas, and most
// blocks, which lie deeper than its own level, only count brackets. It
// validates nothing beyond the nesting; simdjson validates the skeleton and
// every batch, and an error in either is reported as the whole document's
// parse would report it.
//
//===----------------------------------------------------------------------===//
#include "Serde/JsonBatch.h"
#include "Serde/JsonDom.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <set>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
// x86-64 builds target SSE2 only; where the CPU has AVX2, the scan of a named
// container runs in a copy of itself compiled for it (half the compares, and
// popcnt in place of a call into libgcc): ~2x on the scan, which comes before
// any batch can start.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EXIR_SCAN_AVX2 1
#include <immintrin.h>
#endif

namespace exir::json {

namespace {
// Below this a container's DOM is a few MB: not worth a batch of its own.
constexpr size_t kDefaultDeferMinBytes = size_t(1) << 20;
std::atomic<size_t> deferMinBytesValue{kDefaultDeferMinBytes};
// Text per batch: its DOM (~2.6x) stays in the caches and is reused.
constexpr size_t kBatchBytes = size_t(256) << 10;
} // namespace

size_t deferMinBytes() { return deferMinBytesValue.load(std::memory_order_relaxed); }

namespace {
std::atomic<bool> wideScanAllowed{true};

/// Whether this CPU has every extension the wide scan is compiled for (asked once).
bool cpuRunsWideScan() {
#ifdef EXIR_SCAN_AVX2
  static const bool runs =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi");
  return runs;
#else
  return false;
#endif
}
} // namespace

bool setWideScan(bool allowed) {
  wideScanAllowed.store(allowed, std::memory_order_relaxed);
  return allowed && cpuRunsWideScan();
}

void setDeferMinBytes(size_t n) {
  deferMinBytesValue.store(n == 0 ? kDefaultDeferMinBytes : n, std::memory_order_relaxed);
}

namespace {

using Pattern = std::vector<std::string_view>;

std::vector<Pattern> splitPatterns(const std::vector<std::string> &patterns) {
  std::vector<Pattern> out;
  for (const std::string &p : patterns) {
    Pattern segments;
    size_t at = 0;
    while (at < p.size() && p[at] == '/') {
      size_t next = p.find('/', at + 1);
      if (next == std::string::npos) next = p.size();
      segments.push_back(std::string_view(p).substr(at + 1, next - at - 1));
      at = next;
    }
    if (!segments.empty()) out.push_back(std::move(segments));
  }
  return out;
}

struct Frame {
  bool object = false;
  bool expectKey = false;  // objects: the next string is a key
  bool plainPath = false;  // reached through plain keys only (no arrays, no escapes)
  std::string_view key;    // the key that leads to this container (plainPath)
  std::string_view lastKey;
  bool lastKeyPlain = false;
};

bool matches(const std::vector<Frame> &frames, const Pattern &pattern) {
  // frames[0] is the root (no key); frames[d] was reached by key frames[d].key.
  if (frames.size() != pattern.size() + 1) return false;
  for (size_t d = 0; d < pattern.size(); ++d)
    if (pattern[d] != "*" && pattern[d] != frames[d + 1].key) return false;
  return true;
}

std::string pointerOf(const std::vector<Frame> &frames) {
  std::string out;
  for (size_t d = 1; d < frames.size(); ++d) out += "/" + std::string(frames[d].key);
  return out;
}

// Bit i of the result: the xor of bits 0..i of x (inside a string: an odd
// number of quotes so far).
uint64_t prefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

struct BlockMasks {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0, comma = 0;
};

// The masks of the 64 bytes at p (which may extend into the padding), with
// the instructions every x86-64 CPU has (or byte by byte elsewhere).
BlockMasks baselineMasks(const char *p) {
  BlockMasks m;
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), lower = _mm_set1_epi8(0x20),
                open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}'), comma = _mm_set1_epi8(',');
  for (int k = 0; k < 4; ++k) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + 16 * k));
    __m128i folded = _mm_or_si128(v, lower); // '[' -> '{', ']' -> '}'
    auto bits = [&](__m128i eq) {
      return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(eq))) << (16 * k);
    };
    m.quote |= bits(_mm_cmpeq_epi8(v, quote));
    m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
    m.open |= bits(_mm_cmpeq_epi8(folded, open));
    m.close |= bits(_mm_cmpeq_epi8(folded, close));
    m.comma |= bits(_mm_cmpeq_epi8(v, comma));
  }
#else
  for (int j = 0; j < 64; ++j) {
    uint64_t bit = uint64_t(1) << j;
    char c = p[j];
    if (c == '"') m.quote |= bit;
    else if (c == '\\') m.backslash |= bit;
    else if (c == '{' || c == '[') m.open |= bit;
    else if (c == '}' || c == ']') m.close |= bit;
    else if (c == ',') m.comma |= bit;
  }
#endif
  return m;
}

#ifdef EXIR_SCAN_AVX2
// The same masks in two 32-byte halves.
[[gnu::target("avx2")]] inline BlockMasks avx2Masks(const char *p) {
  BlockMasks m;
  const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\'), lower = _mm256_set1_epi8(0x20),
                open = _mm256_set1_epi8('{'), close = _mm256_set1_epi8('}'), comma = _mm256_set1_epi8(',');
  for (int k = 0; k < 2; ++k) {
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + 32 * k));
    __m256i folded = _mm256_or_si256(v, lower); // '[' -> '{', ']' -> '}'
    // (No lambda here: it would not inherit the target.)
    const int shift = 32 * k;
    m.quote |= uint64_t(uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, quote)))) << shift;
    m.backslash |= uint64_t(uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, backslash)))) << shift;
    m.open |= uint64_t(uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, open)))) << shift;
    m.close |= uint64_t(uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, close)))) << shift;
    m.comma |= uint64_t(uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, comma)))) << shift;
  }
  return m;
}
#endif

// From the opening bracket at `open` to its closing one, whose offset is
// returned (npos if the text ends first); the commas of the container's own
// level are appended to `commas` and the containers inside it are counted in
// `inner`. `text` must be followed by 64 readable bytes (simdjson's padding).
//
// A template over the mask function, inlined into one copy per instruction
// set (the AVX2 copy must not call out of itself: a call per block would cost
// what the wider compares save).
template <BlockMasks (*Masks)(const char *)>
[[gnu::always_inline]] inline size_t scanContainerWith(std::string_view text, size_t open,
                                                      std::vector<size_t> &commas, size_t &inner) {
  static_assert(simdjson::SIMDJSON_PADDING >= 64, "blocks read up to 63 bytes past the text");
  const char *p = text.data();
  const size_t n = text.size();
  int64_t depth = 1;        // 1: the container's own level
  uint64_t inString = 0;    // all ones when the block before ended inside a string
  bool escapeNext = false;  // the block before ended with an unpaired backslash
  for (size_t i = open + 1; i < n; i += 64) {
    uint64_t valid = n - i >= 64 ? ~uint64_t(0) : (uint64_t(1) << (n - i)) - 1;
    BlockMasks m = Masks(p + i);
    uint64_t escaped = 0;
    if ((m.backslash & valid) || escapeNext) { // rare in programs: byte by byte
      for (size_t j = 0; j < 64 && i + j < n; ++j) {
        if (escapeNext) {
          escaped |= uint64_t(1) << j;
          escapeNext = false;
        } else if (p[i + j] == '\\') {
          escapeNext = true;
        }
      }
    }
    uint64_t inside = prefixXor(m.quote & ~escaped & valid) ^ inString;
    inString = inside >> 63 ? ~uint64_t(0) : 0;
    uint64_t outside = ~inside & valid;
    uint64_t opens = m.open & outside, closes = m.close & outside, separators = m.comma & outside;
    auto closing = static_cast<int64_t>(std::popcount(closes));
    if (depth - closing >= 2) { // the block stays below the container's own level
      depth += static_cast<int64_t>(std::popcount(opens)) - closing;
      inner += static_cast<size_t>(std::popcount(opens));
      continue;
    }
    for (uint64_t events = opens | closes | separators; events; events &= events - 1) {
      int b = std::countr_zero(events);
      uint64_t bit = uint64_t(1) << b;
      if (opens & bit) {
        ++depth;
        ++inner;
      } else if (closes & bit) {
        if (--depth == 0) return i + static_cast<size_t>(b);
      } else if (depth == 1) {
        commas.push_back(i + static_cast<size_t>(b));
      }
    }
  }
  return std::string_view::npos;
}

#ifdef EXIR_SCAN_AVX2
// cpuRunsWideScan() checks for each extension named here.
[[gnu::target("avx2,popcnt,bmi")]] size_t scanContainerAvx2(std::string_view text, size_t open,
                                                              std::vector<size_t> &commas, size_t &inner) {
  return scanContainerWith<avx2Masks>(text, open, commas, inner);
}
#endif

size_t scanContainer(std::string_view text, size_t open, std::vector<size_t> &commas, size_t &inner) {
#ifdef EXIR_SCAN_AVX2
  if (cpuRunsWideScan() && wideScanAllowed.load(std::memory_order_relaxed))
    return scanContainerAvx2(text, open, commas, inner);
#endif
  return scanContainerWith<baselineMasks>(text, open, commas, inner);
}

} // namespace

std::vector<DeferredContainer> findDeferredContainers(std::string_view text,
                                                      const std::vector<std::string> &patterns,
                                                      size_t minBytes) {
  std::vector<Pattern> split = splitPatterns(patterns);
  std::vector<DeferredContainer> found;
  if (split.empty()) return found;
  std::vector<Frame> frames;
  frames.reserve(64);
  std::vector<size_t> commas; // of the container scanContainer crosses
  size_t containers = 0;      // opened so far that the skeleton keeps
  bool sawRoot = false;
  const char *p = text.data();
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char c = p[i];
    switch (c) {
    case '"': {
      size_t start = i + 1;
      for (;;) { // to the closing quote: one not preceded by an odd run of backslashes
        const void *q = std::memchr(p + i + 1, '"', n - i - 1);
        if (!q) return {};
        i = static_cast<size_t>(static_cast<const char *>(q) - p);
        size_t k = i;
        while (k > start && p[k - 1] == '\\') --k;
        if ((i - k) % 2 == 0) break;
      }
      if (!frames.empty() && frames.back().object && frames.back().expectKey) {
        Frame &top = frames.back();
        top.lastKey = text.substr(start, i - start);
        top.lastKeyPlain = std::memchr(p + start, '\\', i - start) == nullptr &&
                           top.lastKey.find_first_of("~/") == std::string_view::npos;
        top.expectKey = false;
      }
      if (frames.empty()) sawRoot = true;
      break;
    }
    case '{':
    case '[': {
      if (frames.empty() && sawRoot) return {}; // a second value after the root
      size_t ordinal = containers++;
      Frame frame;
      frame.object = c == '{';
      frame.expectKey = frame.object;
      if (frames.empty()) {
        frame.plainPath = true;
      } else {
        const Frame &parent = frames.back();
        frame.plainPath = parent.plainPath && parent.object && parent.lastKeyPlain;
        if (frame.plainPath) frame.key = parent.lastKey;
      }
      frames.push_back(frame);
      bool named = false;
      if (frame.plainPath)
        for (const Pattern &pattern : split)
          if (matches(frames, pattern)) {
            named = true;
            break;
          }
      if (!named) break;
      commas.clear();
      size_t inner = 0;
      size_t close = scanContainer(text, i, commas, inner);
      if (close == std::string_view::npos || (p[close] == '}') != frame.object) return {};
      if (close + 1 - i < minBytes || commas.empty()) {
        containers += inner; // kept in the skeleton
      } else {
        DeferredContainer container;
        container.pointer = pointerOf(frames);
        container.object = frame.object;
        container.ordinal = ordinal;
        container.separators.reserve(commas.size() + 2);
        container.separators.push_back(i);
        container.separators.insert(container.separators.end(), commas.begin(), commas.end());
        container.separators.push_back(close);
        found.push_back(std::move(container));
      }
      frames.pop_back();
      i = close;
      break;
    }
    case '}':
    case ']': {
      if (frames.empty() || frames.back().object != (c == '}')) return {};
      frames.pop_back();
      if (frames.empty()) sawRoot = true;
      break;
    }
    case ',':
      if (frames.empty()) return {};
      if (frames.back().object) frames.back().expectKey = true;
      break;
    default:
      if (frames.empty() && !(c == ' ' || c == '\n' || c == '\r' || c == '\t')) sawRoot = true;
      break;
    }
  }
  if (!frames.empty()) return {};
  // A pointer twice (a repeated key): which one a reader sees is the DOM's business.
  std::set<std::string_view> seen, repeated;
  for (const auto &container : found)
    if (!seen.insert(container.pointer).second) repeated.insert(container.pointer);
  if (!repeated.empty()) return {};
  return found;
}

simdjson::padded_string skeletonText(std::string_view text, const std::vector<DeferredContainer> &containers) {
  size_t size = text.size();
  for (const auto &container : containers) size -= container.separators.back() - container.separators.front() - 1;
  simdjson::padded_string out(size);
  char *to = out.data();
  size_t from = 0;
  for (const auto &container : containers) {
    size_t keep = container.separators.front() + 1; // through the opening bracket
    std::memcpy(to, text.data() + from, keep - from);
    to += keep - from;
    from = container.separators.back(); // from the closing bracket on
  }
  std::memcpy(to, text.data() + from, text.size() - from);
  return out;
}

bool plainKey(std::string_view text, const DeferredContainer &container, size_t index, std::string_view &key) {
  size_t i = container.separators[index] + 1, end = container.separators[index + 1];
  while (i < end && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) ++i;
  if (i >= end || text[i] != '"') return false;
  const void *q = std::memchr(text.data() + i + 1, '"', end - i - 1);
  if (!q) return false;
  size_t close = static_cast<size_t>(static_cast<const char *>(q) - text.data());
  key = text.substr(i + 1, close - i - 1);
  return std::memchr(key.data(), '\\', key.size()) == nullptr;
}

size_t ItemBatches::batchEnd(size_t begin, size_t end) const {
  const auto &s = container_.separators;
  size_t e = begin + 1;
  while (e < end && s[e] - s[begin] < kBatchBytes) ++e;
  return e;
}

char *ItemBatches::buffer(size_t size) {
  if (capacity_ < size + simdjson::SIMDJSON_PADDING) {
    capacity_ = std::max(2 * capacity_, size + simdjson::SIMDJSON_PADDING);
    buffer_ = std::make_unique<char[]>(capacity_);
  }
  return buffer_.get();
}

size_t ItemBatches::wrap(size_t begin, size_t end) {
  size_t from = container_.separators[begin] + 1, to = container_.separators[end];
  size_t size = to - from + 2;
  char *b = buffer(size);
  b[0] = container_.object ? '{' : '[';
  std::memcpy(b + 1, doc_.text().data() + from, to - from);
  b[size - 1] = container_.object ? '}' : ']';
  return size;
}

simdjson::dom::element ItemBatches::parse(size_t begin, size_t end) {
  size_t size = wrap(begin, end);
  simdjson::dom::element batch;
  auto error = parser_.parse(buffer_.get(), size, false).get(batch);
  std::string quoted;
  if (error && error != simdjson::MEMALLOC && doc_.textIsValid() &&
      quoteBareNonFiniteTokens(std::string_view(buffer_.get(), size), quoted)) {
    // Old json.dumps output: quoted, as the whole document's parse would.
    std::memcpy(buffer(quoted.size()), quoted.data(), quoted.size());
    error = parser_.parse(buffer_.get(), quoted.size(), false).get(batch);
  }
  size_t count = 0;
  if (!error)
    count = container_.object ? batch.get_object().value_unsafe().size() : batch.get_array().value_unsafe().size();
  if (error || count != end - begin) {
    // The item to blame where the whole text has no syntax error (bad UTF-8, ...).
    size_t item = begin;
    for (size_t k = begin; k < end; ++k) {
      size_t one = wrap(k, k + 1);
      if (parser_.parse(buffer_.get(), one, false).error()) {
        item = k;
        break;
      }
    }
    doc_.failInBatch(container_, item, error);
  }
  return batch;
}

simdjson::dom::array ItemBatches::parseArray(size_t begin, size_t end) {
  return parse(begin, end).get_array().value_unsafe();
}

simdjson::dom::object ItemBatches::parseObject(size_t begin, size_t end) {
  return parse(begin, end).get_object().value_unsafe();
}

} // namespace exir::json
