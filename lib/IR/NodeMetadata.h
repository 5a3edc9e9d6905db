//===- IR/NodeMetadata.h - A node's metadata, strings shared ----*- C++ -*-===//
//
// torch.export writes every node's stack_trace, nn_module_stack,
// source_fn_stack and torch_fn: 40-55% of the program JSON of the real models
// in the corpus (gpt2_tiny: 124 of 212 KB), mostly repeats (one stack_trace
// line for every layer of a loop). Held as std::strings in an OrderedMap that
// was ~430 bytes a node on mlp-100k, and every decomposition copied all of it
// into each node it made. Here a value is a SharedString, one immutable
// reference-counted record: the reader gives equal values one record
// (StringInterner), and a copy of a node's metadata copies pointers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exir {

/// An immutable string shared by reference: 8 bytes, one allocation holding
/// the count, the size and the characters; copies share it (the count is
/// atomic: copies move between threads). The empty string holds nothing.
class SharedString {
public:
  SharedString() noexcept = default;
  SharedString(std::string_view s);
  SharedString(const char *s) : SharedString(std::string_view(s)) {}
  SharedString(const std::string &s) : SharedString(std::string_view(s)) {}
  SharedString(const SharedString &o) noexcept : rec_(o.rec_) {
    if (rec_) rec_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  SharedString(SharedString &&o) noexcept : rec_(std::exchange(o.rec_, nullptr)) {}
  SharedString &operator=(SharedString o) noexcept {
    std::swap(rec_, o.rec_);
    return *this;
  }
  ~SharedString() { release(); }

  std::string_view view() const noexcept { return rec_ ? std::string_view(chars(), rec_->size) : std::string_view(); }
  operator std::string_view() const noexcept { return view(); }
  std::string str() const { return std::string(view()); }
  const char *data() const noexcept { return rec_ ? chars() : ""; }
  size_t size() const noexcept { return rec_ ? rec_->size : 0; }
  bool empty() const noexcept { return size() == 0; }
  /// Whether both hold the same record (not only equal characters).
  bool sharesRecordWith(const SharedString &o) const noexcept { return rec_ && rec_ == o.rec_; }

  friend bool operator==(const SharedString &a, const SharedString &b) noexcept {
    return a.rec_ == b.rec_ || a.view() == b.view();
  }
  friend bool operator==(const SharedString &a, std::string_view b) noexcept { return a.view() == b; }
  friend bool operator==(const SharedString &a, const std::string &b) noexcept { return a.view() == b; }
  friend bool operator==(const SharedString &a, const char *b) noexcept { return a.view() == b; }

private:
  struct Record {
    std::atomic<uint32_t> refs;
    uint32_t size; // longer strings are refused (std::length_error) when made
  };                // then the characters and a NUL
  const char *chars() const noexcept { return reinterpret_cast<const char *>(rec_ + 1); }
  void release() noexcept;

  Record *rec_ = nullptr;
};

/// Gives equal strings one SharedString. Open addressing over the strings'
/// hashes; it holds a reference to each string it returned until destroyed.
class StringInterner {
public:
  SharedString intern(std::string_view s);
  size_t size() const { return count_; }

private:
  struct Slot {
    uint64_t hash = 0;
    SharedString text;
  };
  void grow();

  std::vector<Slot> slots_;
  size_t count_ = 0;
};

/// A node's metadata: keys and values in the file's order (the output keeps
/// it), found by a linear search (a node has a handful of keys).
class NodeMetadata {
public:
  using value_type = std::pair<SharedString, SharedString>;
  using const_iterator = std::vector<value_type>::const_iterator;

  const SharedString *find(std::string_view key) const {
    const value_type *item = findItem(key);
    return item ? &item->second : nullptr;
  }
  /// The key's pair (its key record can then be shared), or null.
  const value_type *findItem(std::string_view key) const {
    for (const auto &item : items_)
      if (item.first == key) return &item;
    return nullptr;
  }
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  /// Inserts or overwrites; an overwritten key keeps its position.
  void set(SharedString key, SharedString value) {
    for (auto &item : items_)
      if (item.first == key) {
        item.second = std::move(value);
        return;
      }
    items_.emplace_back(std::move(key), std::move(value));
  }
  bool erase(std::string_view key);
  void clear() { items_.clear(); }
  void reserve(size_t n) { items_.reserve(n); }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  bool operator==(const NodeMetadata &o) const = default;

private:
  std::vector<value_type> items_;
};

} // namespace exir
