//===- Serde/JsonWriter.h - Streaming JSON writer in Python's style -*- C++ -*-===//
//
// torch.export documents are produced by Python's json.dumps with default
// settings: separators ", " and ": ", no indentation, ensure_ascii (every byte
// outside printable ASCII becomes \uXXXX), floats printed like repr(). This
// writer reproduces that byte for byte so our output is indistinguishable from
// torch's, and a second write of the same IR is byte-identical. It appends to
// one std::string and never builds a DOM, so 100k-node graphs write in a few
// hundred milliseconds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace exir {

/// The high bit of each of the 8 bytes (loaded little-endian) that needs
/// escaping: < 0x20, '"', '\\', or >= 0x7F. A borrow can also mark bytes after
/// a marked one, never before it, so the lowest mark is always the first byte
/// to escape.
inline uint64_t jsonWordEscapeMask(uint64_t w) {
  constexpr uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  auto hasZeroByte = [](uint64_t v) { return (v - ones) & ~v & highs; };
  uint64_t control = (w - ones * 0x20) & ~w & highs; // bytes < 0x20 (for bytes < 0x80)
  uint64_t quote = hasZeroByte(w ^ (ones * '"'));
  uint64_t backslash = hasZeroByte(w ^ (ones * '\\'));
  uint64_t del = hasZeroByte(w ^ (ones * 0x7F));
  return control | quote | backslash | del | (w & highs);
}

/// True if any of the 8 bytes needs escaping.
inline bool jsonWordNeedsEscape(uint64_t w) { return jsonWordEscapeMask(w) != 0; }

#ifdef __SSE2__
/// Bit i set if byte i of the 16 needs escaping. Exact per byte: the signed
/// compare catches both bytes < 0x20 and bytes >= 0x80 (negative as int8).
inline unsigned jsonEscapeMask16(__m128i v) {
  __m128i special = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
  __m128i more = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F)));
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(special, more)));
}
#endif

/// True for a byte written as itself in a JSON string: printable ASCII other
/// than '"' and '\\'.
constexpr bool plainJsonByte(unsigned char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; }

/// An object key written as a literal in the source. The check that it needs
/// no escaping runs when the caller is compiled (a literal that does is a
/// compile error), so writing it only copies its bytes: the schema writers'
/// keys are most of the keys of a program, and the check was most of the cost
/// of writing one ("is_hop_single_tensor_return": four words).
struct JsonKey {
  template <size_t N> consteval JsonKey(const char (&literal)[N]) : text(literal, N - 1) {
    for (char c : text)
      if (!plainJsonByte(static_cast<unsigned char>(c)))
        throw "a literal JSON key must be printable ASCII without quotes or backslashes";
  }
  std::string_view text;
};

class JsonWriter {
public:
  JsonWriter() { buffer_.resize(1 << 16); }

  void beginObject() { open('{'); }
  void endObject() { close('}'); }
  void beginArray() { open('['); }
  void endArray() { close(']'); }

  /// Writes an object key; the next value call writes its value. A literal
  /// key is checked for bytes to escape when the caller is compiled (JsonKey);
  /// any other is checked here.
  [[gnu::always_inline]] void key(JsonKey name) { plainKey(name.text); }
  template <class S, std::enable_if_t<!std::is_array_v<std::remove_cvref_t<S>>, int> = 0>
  void key(const S &name) {
    std::string_view text(name);
    if (!needsEscape(text)) return plainKey(text);
    if (!first_.back()) put(", ", 2);
    putEscaped(text);
    put(": ", 2);
    first_.back() = false;
    afterKey_ = true;
  }

  void null() {
    beforeValue();
    put("null", 4);
  }
  void boolean(bool v) {
    beforeValue();
    if (v) put("true", 4);
    else put("false", 5);
  }
  void integer(int64_t v);
  void unsignedInteger(uint64_t v);
  /// Python repr() of a float; infinities as the strings "Infinity"/"-Infinity"
  /// (what torch's dumper writes), NaN as the string "NaN".
  void real(double v);
  void string(std::string_view s);

  /// Convenience: key + value.
  void field(JsonKey name, std::string_view s) { key(name); string(s); }
  void fieldInt(JsonKey name, int64_t v) { key(name); integer(v); }
  void fieldBool(JsonKey name, bool v) { key(name); boolean(v); }
  template <class S, std::enable_if_t<!std::is_array_v<std::remove_cvref_t<S>>, int> = 0>
  void field(const S &name, std::string_view s) { key(name); string(s); }
  template <class S, std::enable_if_t<!std::is_array_v<std::remove_cvref_t<S>>, int> = 0>
  void fieldInt(const S &name, int64_t v) { key(name); integer(v); }
  template <class S, std::enable_if_t<!std::is_array_v<std::remove_cvref_t<S>>, int> = 0>
  void fieldBool(const S &name, bool v) { key(name); boolean(v); }

  /// The text written so far.
  std::string_view str() const { return {buffer_.data(), size_}; }
  std::string take() {
    buffer_.resize(size_);
    size_ = 0;
    return std::move(buffer_);
  }
  /// Makes room for `n` bytes in total.
  void reserve(size_t n) {
    if (n > buffer_.size()) buffer_.resize(n);
  }
  /// Streams: the text goes to `sink` in pieces of about `chunk` bytes instead
  /// of accumulating (str() and take() then hold only what is not sent yet).
  /// Call flush() after the last value.
  void streamTo(std::function<void(std::string_view)> sink, size_t chunk = size_t(1) << 20) {
    sink_ = std::move(sink);
    buffer_.resize(std::max(chunk, size_));
  }
  /// Streams whole buffers instead: `exchange(buffer, size)` takes the filled
  /// buffer (its first `size` bytes are the text) and returns one to fill
  /// next, of any size (BufferHandoff: no copy of the text on its way out).
  void streamBuffersTo(std::function<std::string(std::string &&, size_t)> exchange,
                       size_t chunk = size_t(1) << 20) {
    exchange_ = std::move(exchange);
    chunk_ = chunk;
    buffer_.resize(std::max(chunk, size_));
  }
  /// Empties the writer and puts it inside a container that already has an
  /// element: what it writes next is text to splice() into another writer
  /// after that writer's items (see Serde/Parallel.h).
  void beginFragment() {
    size_ = 0;
    first_.assign(1, false);
    afterKey_ = false;
  }
  /// Appends a fragment's text as the next items of the open container.
  void splice(std::string_view text) {
    if (text.empty()) return;
    put(text.data(), text.size());
    first_.back() = false;
  }
  /// Sends what is buffered to the sink given to streamTo().
  void flush() {
    if (exchange_) {
      if (size_ == 0) return;
      buffer_ = exchange_(std::move(buffer_), size_);
      size_ = 0;
      if (buffer_.size() < chunk_) buffer_.resize(chunk_);
      return;
    }
    if (sink_ && size_ > 0) sink_(std::string_view(buffer_.data(), size_));
    if (sink_) size_ = 0;
  }

private:
  /// Writes a key that needs no escaping. One reservation for separator,
  /// quotes, name and ": " (keys are written a few million times per
  /// 100k-node program). Inlined: for a literal the copy has a known size.
  [[gnu::always_inline]] void plainKey(std::string_view name) {
    char *p = room(name.size() + 6);
    char *start = p;
    if (!first_.back()) *p++ = ',', *p++ = ' ';
    *p++ = '"';
    std::memcpy(p, name.data(), name.size());
    p += name.size();
    *p++ = '"', *p++ = ':', *p++ = ' ';
    size_ += static_cast<size_t>(p - start);
    first_.back() = false;
    afterKey_ = true;
  }
  void open(char c) {
    beforeValue();
    put(c);
    first_.push_back(true);
  }
  void close(char c) {
    first_.pop_back();
    put(c);
  }
  /// Writes the ", " that separates this value from the previous one.
  void beforeValue() {
    if (afterKey_) {
      afterKey_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) put(", ", 2);
      first_.back() = false;
    }
  }
  /// Pointer to `n` writable bytes at the end (commit them with size_ += k).
  char *room(size_t n) {
    if (size_ + n > buffer_.size()) [[unlikely]]
      makeRoom(n);
    return buffer_.data() + size_;
  }
  /// room()'s rare path, out of line so that room() inlines small.
  [[gnu::noinline]] void makeRoom(size_t n) {
    flush();
    if (size_ + n > buffer_.size()) buffer_.resize(std::max(buffer_.size() * 2, size_ + n));
  }
  void put(const char *p, size_t n) {
    std::memcpy(room(n), p, n);
    size_ += n;
  }
  void put(char c) {
    *room(1) = c;
    ++size_;
  }
  void putString(std::string_view s) {
    if (needsEscape(s)) return putEscaped(s);
    char *p = room(s.size() + 2);
    p[0] = '"';
    std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
    size_ += s.size() + 2;
  }
  /// A string with at least one byte to escape (Python's ensure_ascii form).
  void putEscaped(std::string_view s);
  /// True if some byte of `s` is not printable ASCII or is '"' or '\\'.
  /// Inline and without a loop for the short names and keys that make up
  /// most of a program (12 million strings of 10 bytes on average at 100k nodes).
  static bool needsEscape(std::string_view s) {
    const char *p = s.data();
    size_t n = s.size();
    uint64_t w;
#ifdef __SSE2__
    // 16 bytes per check (SSE2 is part of x86-64): a third of the
    // instructions of two word checks.
    if (n >= 16) {
      size_t i = 0;
      for (; i + 16 <= n; i += 16)
        if (jsonEscapeMask16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p + i)))) return true;
      // The tail, overlapping checked bytes.
      return i != n && jsonEscapeMask16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p + n - 16)));
    }
    if (n >= 8) {
      __m128i head = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(p));
      __m128i tail = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(p + n - 8));
      return jsonEscapeMask16(_mm_unpacklo_epi64(head, tail)) != 0;
    }
#else
    if (n >= 8) {
      size_t i = 0;
      for (; i + 8 <= n; i += 8) {
        std::memcpy(&w, p + i, 8);
        if (jsonWordNeedsEscape(w)) return true;
      }
      if (i == n) return false;
      std::memcpy(&w, p + n - 8, 8); // the tail, overlapping checked bytes
      return jsonWordNeedsEscape(w);
    }
#endif
    if (n >= 4) {
      uint32_t head, tail;
      std::memcpy(&head, p, 4);
      std::memcpy(&tail, p + n - 4, 4);
      return jsonWordNeedsEscape(head | uint64_t(tail) << 32);
    }
    w = 0x2020202020202020ull; // spaces need no escaping
    for (size_t i = 0; i < n; ++i)
      w = (w & ~(uint64_t(0xff) << (8 * i))) | uint64_t(static_cast<unsigned char>(p[i])) << (8 * i);
    return jsonWordNeedsEscape(w);
  }

  std::string buffer_; // buffer_[0, size_) is the output; the rest is spare room
  size_t size_ = 0;
  std::vector<char> first_; // per open container: no element written yet
  std::string scratch_;     // escaped strings and float reprs before they are copied
  bool afterKey_ = false;
  std::function<void(std::string_view)> sink_; // set by streamTo()
  std::function<std::string(std::string &&, size_t)> exchange_; // set by streamBuffersTo()
  size_t chunk_ = 0;
};

/// Appends repr(v) for a finite double, e.g. 1.0, 0.3, 1e-05, 1e+16.
void appendPythonFloatRepr(std::string &out, double v);

/// Appends a JSON string literal with Python's ensure_ascii escaping.
void appendJsonString(std::string &out, std::string_view s);

/// `json` (valid JSON, e.g. this writer's output) re-indented for reading: one
/// member or element per line, `indent` spaces per level, empty containers kept
/// as {} and []. Strings and numbers are copied unchanged.
std::string indentJson(std::string_view json, int indent = 2);

} // namespace exir
