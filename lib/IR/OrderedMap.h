//===- IR/OrderedMap.h - Insertion-ordered string map ----------*- C++ -*-===//
//
// JSON objects in torch.export documents are order-significant for byte-stable
// output (tensor_values, range_constraints, ...). This keeps insertion order and
// gives O(1) lookup by key. The index is an open-addressing table of item
// positions (4 bytes a slot), not a second map holding copies of the keys: a
// 100k-node graph has 400k tensor values, and a node-based hash map cost one
// allocation, a key copy and ~100 bytes per value.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace exir {

template <typename V> class OrderedMap {
public:
  using value_type = std::pair<std::string, V>;

  /// Inserts or overwrites; an overwritten key keeps its position.
  V &set(const std::string &key, V value) {
    if (size_t pos = position(key); pos != npos) {
      items_[pos].second = std::move(value);
      return items_[pos].second;
    }
    items_.emplace_back(key, std::move(value));
    if (!slots_.empty() || items_.size() > kLinearLimit) indexLast();
    return items_.back().second;
  }
  V &operator[](const std::string &key) {
    if (size_t pos = position(key); pos != npos) return items_[pos].second;
    return set(key, V{});
  }
  const V *find(const std::string &key) const {
    size_t pos = position(key);
    return pos == npos ? nullptr : &items_[pos].second;
  }
  V *find(const std::string &key) {
    size_t pos = position(key);
    return pos == npos ? nullptr : &items_[pos].second;
  }
  bool contains(const std::string &key) const { return position(key) != npos; }
  bool erase(const std::string &key) {
    size_t pos = position(key);
    if (pos == npos) return false;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(pos));
    if (!slots_.empty()) rebuildIndex(items_.size()); // positions after `pos` moved
    return true;
  }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() {
    items_.clear();
    slots_.clear();
  }
  void reserve(size_t n) {
    items_.reserve(n);
    if (n > kLinearLimit && slots_.size() < 2 * n) rebuildIndex(n);
  }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  bool operator==(const OrderedMap &other) const { return items_ == other.items_; }

private:
  // Small maps (node metadata: a handful of keys, one map per node) are searched
  // linearly; a hash index is built only past this size, which keeps a 100k-node
  // program from allocating 100k hash tables.
  static constexpr size_t kLinearLimit = 8;
  static constexpr size_t npos = static_cast<size_t>(-1);

  size_t position(const std::string &key) const {
    if (slots_.empty()) {
      for (size_t i = 0; i < items_.size(); ++i)
        if (items_[i].first == key) return i;
      return npos;
    }
    size_t mask = slots_.size() - 1;
    for (size_t i = std::hash<std::string>{}(key) & mask;; i = (i + 1) & mask) {
      uint32_t slot = slots_[i];
      if (slot == 0) return npos;
      if (items_[slot - 1].first == key) return slot - 1;
    }
  }
  /// Indexes the last item, growing the table to keep it at most half full.
  void indexLast() {
    if (2 * items_.size() > slots_.size()) rebuildIndex(items_.size());
    else insertSlot(items_.size() - 1);
  }
  /// A table for `n` items (a power of two, at least 2n slots) holding every item.
  void rebuildIndex(size_t n) {
    size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    slots_.assign(capacity, 0);
    for (size_t i = 0; i < items_.size(); ++i) insertSlot(i);
  }
  void insertSlot(size_t item) {
    size_t mask = slots_.size() - 1;
    size_t i = std::hash<std::string>{}(items_[item].first) & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = static_cast<uint32_t>(item + 1);
  }

  std::vector<value_type> items_;
  std::vector<uint32_t> slots_; // item position + 1 per used slot, 0 = free; empty = no index
};

} // namespace exir
