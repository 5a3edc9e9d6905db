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
    auto it = index_.find(key);
    if (it != index_.end()) {
      items_[it->second].second = std::move(value);
      return items_[it->second].second;
    }
    index_.emplace(key, items_.size());
    items_.emplace_back(key, std::move(value));
    return items_.back().second;
  }
  V &operator[](const std::string &key) {
    auto it = index_.find(key);
    if (it != index_.end()) return items_[it->second].second;
    return set(key, V{});
  }
  const V *find(const std::string &key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  V *find(const std::string &key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  bool contains(const std::string &key) const { return index_.count(key) != 0; }
  bool erase(const std::string &key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    size_t pos = it->second;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(pos));
    index_.erase(it);
    for (auto &entry : index_)
      if (entry.second > pos) --entry.second;
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
    index_.reserve(n);
  }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  bool operator==(const OrderedMap &other) const { return items_ == other.items_; }

private:
  std::vector<value_type> items_;
  std::unordered_map<std::string, size_t> index_;
};

} // namespace exir
