//===- IR/OrderedMap.h - Insertion-ordered string map ----------*- C++ -*-===//
//
// JSON objects in torch.export documents are order-significant for byte-stable
// output (tensor_values, range_constraints, ...). This keeps insertion order and
// gives O(1) lookup by key. The index is an open-addressing table of item
// positions tagged with hash bits (8 bytes a slot), not a node-based map holding
// a copy of every key: a 100k-node graph has ~400k tensor values, and a node
// map cost an allocation, a key copy and ~100 bytes per value, and made a
// rebuild of the index (after erasing) as costly as building the map.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/StringHash.h"

#include <algorithm>
#include <bit>
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
    if (slots_.empty()) { // small: no hash needed unless this insert builds the index
      if (size_t pos = linearPosition(key); pos != npos) {
        items_[pos].second = std::move(value);
        return items_[pos].second;
      }
      items_.emplace_back(key, std::move(value));
      if (items_.size() > kLinearLimit) rebuildIndex(items_.size());
      return items_.back().second;
    }
    size_t hash = hashOf(key);
    if (size_t pos = indexedPosition(key, hash); pos != npos) {
      items_[pos].second = std::move(value);
      return items_[pos].second;
    }
    items_.emplace_back(key, std::move(value));
    indexLast(hash);
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
  /// find() for a key whose hashString() (IR/StringHash.h) the caller has
  /// already computed: a lookup that missed a cache keyed by that hash.
  const V *findHashed(const std::string &key, uint64_t hash) const {
    size_t pos = slots_.empty() ? linearPosition(key) : indexedPosition(key, size_t(hash));
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
  /// Calls `keep(key, value)` on every item in order; the items it returns
  /// false for leave, and it may assign a new key to the others (which must
  /// not collide with any key kept). One compaction and one reindex for the
  /// lot, where erase() per item is linear each.
  template <typename F> void rewrite(F &&keep) {
    size_t out = 0;
    for (size_t i = 0; i < items_.size(); ++i) {
      if (!keep(items_[i].first, items_[i].second)) continue;
      if (out != i) items_[out] = std::move(items_[i]);
      ++out;
    }
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(out), items_.end());
    if (!slots_.empty()) rebuildIndex(items_.size());
  }
  /// Erases every key of `keys` (a range of std::string; absent keys are
  /// skipped), keeping the others in order: one lookup per key to erase
  /// rather than a test of every key kept, one compaction, one reindex.
  template <typename Keys> void eraseKeys(const Keys &keys) {
    std::vector<bool> gone(items_.size(), false);
    bool any = false;
    for (const std::string &key : keys)
      if (size_t pos = position(key); pos != npos) gone[pos] = any = true;
    if (!any) return;
    size_t i = 0;
    rewrite([&](const std::string &, const V &) { return !gone[i++]; });
  }
  /// For filling a map from several threads (a reader's big objects): `n`
  /// items with empty keys and default values are appended, and the map is
  /// left without an index. Keys and values are then set through itemAt()
  /// (one thread may set keys while another sets values), and indexUnique()
  /// must come before any lookup.
  void appendUnindexed(size_t n) {
    items_.resize(items_.size() + n);
    slots_.clear();
  }
  value_type &itemAt(size_t pos) { return items_[pos]; }
  /// Indexes every item; false when a key repeats (the map is then left
  /// unindexed, for clear()).
  bool indexUnique() {
    if (items_.size() <= kLinearLimit) {
      for (size_t i = 0; i < items_.size(); ++i)
        for (size_t j = 0; j < i; ++j)
          if (items_[i].first == items_[j].first) return false;
      return true;
    }
    // Room for the items reserved (as reserve() makes), in the table reserve()
    // made if it is big enough (assign keeps the storage).
    slots_.assign(std::max(indexCapacity(items_.capacity()), std::bit_floor(slots_.capacity())), 0);
    for (size_t item = 0; item < items_.size(); ++item) {
      size_t hash = hashOf(items_[item].first);
      if (indexedPosition(items_[item].first, hash) != npos) {
        slots_.clear();
        return false;
      }
      insertSlot(item, hash);
    }
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
  // linearly; an index is built only past this size, which keeps a 100k-node
  // program from allocating 100k hash tables.
  static constexpr size_t kLinearLimit = 8;
  static constexpr size_t npos = static_cast<size_t>(-1);

  static size_t hashOf(const std::string &key) { return hashString(key); }
  // A slot is (hash tag << 32) | (position + 1), 0 when free: the tag skips
  // most key compares, which would each touch another item's cache line.
  static uint64_t tagOf(size_t hash) { return static_cast<uint64_t>(hash >> 32 ^ hash) << 32; }

  // Small and empty maps (most of a partition's subgraph tables, every
  // node's metadata) are searched without hashing the key.
  size_t position(const std::string &key) const {
    return slots_.empty() ? linearPosition(key) : indexedPosition(key, hashOf(key));
  }
  size_t linearPosition(const std::string &key) const {
    for (size_t i = 0; i < items_.size(); ++i)
      if (items_[i].first == key) return i;
    return npos;
  }
  /// Needs the index (slots_ not empty).
  size_t indexedPosition(const std::string &key, size_t hash) const {
    size_t mask = slots_.size() - 1;
    uint64_t tag = tagOf(hash);
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      uint64_t slot = slots_[i];
      if (slot == 0) return npos;
      size_t pos = static_cast<uint32_t>(slot) - 1;
      if ((slot & ~uint64_t(0xffffffff)) == tag && items_[pos].first == key) return pos;
    }
  }
  /// Indexes the last item, growing the table to keep it at most half full.
  void indexLast(size_t hash) {
    if (2 * items_.size() > slots_.size()) rebuildIndex(items_.size());
    else insertSlot(items_.size() - 1, hash);
  }
  /// Slots for `n` items: a power of two, at least 2n (and 16).
  static size_t indexCapacity(size_t n) {
    size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    return capacity;
  }
  /// A table for `n` items holding every item.
  void rebuildIndex(size_t n) {
    slots_.assign(indexCapacity(n), 0);
    for (size_t i = 0; i < items_.size(); ++i) insertSlot(i, hashOf(items_[i].first));
  }
  void insertSlot(size_t item, size_t hash) {
    size_t mask = slots_.size() - 1;
    size_t i = hash & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = tagOf(hash) | static_cast<uint32_t>(item + 1);
  }

  std::vector<value_type> items_;
  std::vector<uint64_t> slots_; // see tagOf; empty = no index (linear search)
};

} // namespace exir
