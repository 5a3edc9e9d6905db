//===- IR/OrderedMap.h - Insertion-ordered string map ----------*- C++ -*-===//
//
// JSON objects in torch.export documents are order-significant for byte-stable
// output (tensor_values, range_constraints, ...). This keeps insertion order and
// gives O(1) lookup by key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <unordered_map>
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
    if (!index_.empty() || items_.size() > kLinearLimit) indexLast();
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
    if (!index_.empty()) {
      index_.erase(key);
      for (auto &entry : index_)
        if (entry.second > pos) --entry.second;
    }
    return true;
  }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() {
    items_.clear();
    index_.clear();
  }
  void reserve(size_t n) {
    items_.reserve(n);
    if (n > kLinearLimit) index_.reserve(n);
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
    if (items_.size() <= kLinearLimit && index_.empty()) {
      for (size_t i = 0; i < items_.size(); ++i)
        if (items_[i].first == key) return i;
      return npos;
    }
    auto it = index_.find(key);
    return it == index_.end() ? npos : it->second;
  }
  void indexLast() {
    if (index_.empty())
      for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
    else
      index_.emplace(items_.back().first, items_.size() - 1);
  }

  std::vector<value_type> items_;
  std::unordered_map<std::string, size_t> index_;
};

} // namespace exir
