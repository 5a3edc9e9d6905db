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
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace exir {

class JsonWriter {
public:
  JsonWriter() { buffer_.resize(1 << 16); }

  void beginObject() { open('{'); }
  void endObject() { close('}'); }
  void beginArray() { open('['); }
  void endArray() { close(']'); }

  /// Writes an object key; the next value call writes its value.
  void key(std::string_view name);

  void null();
  void boolean(bool v);
  void integer(int64_t v);
  void unsignedInteger(uint64_t v);
  /// Python repr() of a float; infinities as the strings "Infinity"/"-Infinity"
  /// (what torch's dumper writes), NaN as the string "NaN".
  void real(double v);
  void string(std::string_view s);

  /// Convenience: key + value.
  void field(std::string_view name, std::string_view s) { key(name); string(s); }
  void fieldInt(std::string_view name, int64_t v) { key(name); integer(v); }
  void fieldBool(std::string_view name, bool v) { key(name); boolean(v); }

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
  /// Sends what is buffered to the sink given to streamTo().
  void flush() {
    if (sink_ && size_ > 0) sink_(std::string_view(buffer_.data(), size_));
    if (sink_) size_ = 0;
  }

private:
  void open(char c);
  void close(char c);
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
    if (size_ + n > buffer_.size()) {
      flush();
      if (size_ + n > buffer_.size()) buffer_.resize(std::max(buffer_.size() * 2, size_ + n));
    }
    return buffer_.data() + size_;
  }
  void put(const char *p, size_t n);
  void put(char c) {
    *room(1) = c;
    ++size_;
  }
  void putString(std::string_view s);

  std::string buffer_; // buffer_[0, size_) is the output; the rest is spare room
  size_t size_ = 0;
  std::vector<bool> first_; // per open container: no element written yet
  bool afterKey_ = false;
  std::function<void(std::string_view)> sink_; // set by streamTo()
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
