//===- IR/ValueNames.h - Visit and number the value names of a graph -*- C++ -*-===//
//
// Argument::collectTensorNames / collectValueNames copy every name into a
// vector; passes that look at every use of a 100k-node graph call these
// instead, which hand out references into the argument, in the same order.
// ValueIndex numbers the names of a graph densely, so a pass keeps its
// per-value facts in vectors and pays one cheap lookup per use.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"
#include "IR/StringHash.h"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace exir {

/// Calls f(const std::string &) for every tensor name of `arg`, as
/// Argument::collectTensorNames lists them.
template <typename F> void forEachTensorName(const Argument &arg, F &&f) {
  switch (arg.kind) {
  case ArgKind::Tensor: f(arg.name); break;
  case ArgKind::OptionalTensor:
    if (!arg.name.empty()) f(arg.name);
    break;
  case ArgKind::Tensors:
  case ArgKind::OptionalTensors:
    for (const auto &n : arg.names)
      if (!n.empty()) f(n);
    break;
  case ArgKind::NestedTensors:
    for (const auto &l : arg.nestedTensors())
      for (const auto &n : l) f(n);
    break;
  case ArgKind::StringToArgument:
    for (const auto &[k, v] : arg.mapping()) forEachTensorName(v, f);
    break;
  default: break;
  }
}

/// Tensor names, then the names of symbolic values, as
/// Argument::collectValueNames lists them.
template <typename F> void forEachValueName(const Argument &arg, F &&f) {
  forEachTensorName(arg, f);
  switch (arg.kind) {
  case ArgKind::SymInt: case ArgKind::SymInts: case ArgKind::SymBool: case ArgKind::SymBools:
  case ArgKind::SymFloat: case ArgKind::SymFloats:
    for (const auto &sym : arg.syms)
      if (sym.isName) f(sym.name);
    break;
  default: break;
  }
}

/// Dense ids for value names: the first name added gets 0, the next new one 1,
/// and so on. Keys are views of strings the caller keeps alive (the graph's
/// own). An open-addressing table with a word-at-a-time hash: a 100k-node graph
/// has half a million uses, and std::hash plus a node-based map cost a slow
/// byte-wise hash, an allocation and several cache misses per name.
/// find() updates a cache of recent lookups: not for concurrent use.
class ValueIndex {
public:
  static constexpr uint32_t npos = UINT32_MAX;

  ValueIndex() {
    for (auto &r : recent_) r = {0, npos};
  }
  void reserve(size_t n) {
    names_.reserve(n);
    if (slots_.size() < 2 * n) rehash(n);
  }
  size_t size() const { return names_.size(); }
  std::string_view name(uint32_t id) const { return names_[id]; }

  uint32_t find(std::string_view name) const {
    if (slots_.empty()) return npos;
    uint64_t h = hash(name);
    if (uint32_t id = recent(h, name); id != npos) return id;
    size_t mask = slots_.size() - 1;
    uint64_t tag = h & ~uint64_t(0xffffffff);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      uint64_t slot = slots_[i];
      if (slot == 0) return npos;
      uint32_t id = uint32_t(slot) - 1;
      if ((slot & ~uint64_t(0xffffffff)) == tag && names_[id] == name) return remember(h, id);
    }
  }
  /// The id of `name`, added as the next id if new.
  uint32_t intern(std::string_view name) {
    if (2 * (names_.size() + 1) > slots_.size()) rehash(names_.size() + 1);
    uint64_t h = hash(name);
    if (uint32_t id = recent(h, name); id != npos) return id;
    size_t mask = slots_.size() - 1;
    uint64_t tag = h & ~uint64_t(0xffffffff);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      uint64_t slot = slots_[i];
      if (slot == 0) {
        uint32_t id = uint32_t(names_.size());
        slots_[i] = tag | (uint64_t(id) + 1);
        names_.push_back(name);
        return remember(h, id);
      }
      uint32_t id = uint32_t(slot) - 1;
      if ((slot & ~uint64_t(0xffffffff)) == tag && names_[id] == name) return remember(h, id);
    }
  }

  /// The names' hash (IR/StringHash.h).
  static uint64_t hash(std::string_view s) { return hashString(s); }

private:
  // Most uses name a value defined or used a few nodes before: a small
  // direct-mapped cache of recent lookups (hash, id) answers those from
  // memory still in cache, where the table probe and the key compare would
  // each miss on a table of several MB.
  static constexpr size_t kRecent = 64;
  uint32_t recent(uint64_t h, std::string_view name) const {
    const auto &[rh, id] = recent_[h % kRecent];
    return rh == h && id != npos && names_[id] == name ? id : npos;
  }
  uint32_t remember(uint64_t h, uint32_t id) const {
    recent_[h % kRecent] = {h, id};
    return id;
  }

  /// A table for at least `n` names (power of two, at most half full).
  void rehash(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    slots_.assign(cap, 0);
    size_t mask = cap - 1;
    for (uint32_t id = 0; id < names_.size(); ++id) {
      uint64_t h = hash(names_[id]);
      size_t i = h & mask;
      while (slots_[i]) i = (i + 1) & mask;
      slots_[i] = (h & ~uint64_t(0xffffffff)) | (uint64_t(id) + 1);
    }
  }

  std::vector<std::string_view> names_;
  std::vector<uint64_t> slots_; // (hash tag << 32) | (id + 1); 0 = free
  mutable std::pair<uint64_t, uint32_t> recent_[kRecent];
};

/// Dense ids for the value names of a graph, numbered like a ValueIndex into
/// which the tensor_values keys were interned first (their ids are their
/// positions there), but found with tensor_values' own index instead of a
/// copy of it: for a 100k-node graph that copy (300k names) cost about 13 MB
/// of fresh memory and its build on every pass that numbered the graph.
/// Other names (symbolic values, names without metadata) are numbered after
/// them. Keeps a cache of recent lookups, as ValueIndex: not for concurrent use.
class GraphValueIds {
public:
  static constexpr uint32_t npos = UINT32_MAX;

  explicit GraphValueIds(const OrderedMap<TensorMeta> &tensorValues)
      : values_(tensorValues), numTensorValues_(uint32_t(tensorValues.size())) {
    for (auto &r : recent_) r = {0, npos};
  }
  uint32_t numTensorValues() const { return numTensorValues_; }
  size_t size() const { return numTensorValues_ + others_.size(); }
  std::string_view name(uint32_t id) const {
    return id < numTensorValues_ ? std::string_view((values_.begin() + id)->first) : others_.name(id - numTensorValues_);
  }
  uint32_t find(const std::string &name) const {
    uint64_t h = ValueIndex::hash(name);
    const auto &[rh, rid] = recent_[h % kRecent];
    if (rh == h && rid != npos && this->name(rid) == name) return rid;
    uint32_t id = lookup(name, h);
    if (id != npos) recent_[h % kRecent] = {h, id};
    return id;
  }
  /// The id of `name`, numbered next if new.
  uint32_t intern(const std::string &name) {
    uint32_t id = find(name);
    if (id != npos) return id;
    return numTensorValues_ + others_.intern(name);
  }

private:
  uint32_t lookup(const std::string &name, uint64_t hash) const {
    if (const TensorMeta *meta = values_.findHashed(name, hash)) {
      // The items sit in one array: the value's distance from the first value is its position.
      const char *first = reinterpret_cast<const char *>(&values_.begin()->second);
      return uint32_t(size_t(reinterpret_cast<const char *>(meta) - first) /
                      sizeof(OrderedMap<TensorMeta>::value_type));
    }
    uint32_t other = others_.find(name);
    return other == ValueIndex::npos ? npos : numTensorValues_ + other;
  }
  static constexpr size_t kRecent = 64;
  const OrderedMap<TensorMeta> &values_;
  uint32_t numTensorValues_;
  ValueIndex others_;
  mutable std::pair<uint64_t, uint32_t> recent_[kRecent];
};

/// Where the next definition's name probably sits in tensor_values: exported
/// values come in definition order, and the allocs exir-plan adds are appended
/// in node order, so a graph's outputs walk two runs of tensor_values. Trying
/// the name after each run's last match (memory in cache) saves most lookups;
/// a miss costs one short compare.
class DefinitionCursor {
public:
  /// The position of `name` if it is where a run continues, else npos.
  template <typename NameAt> uint32_t match(std::string_view name, uint32_t limit, const NameAt &nameAt) {
    for (int k : {last_, 1 - last_})
      if (next_[k] < limit && nameAt(next_[k]) == name) {
        last_ = k;
        return next_[k]++;
      }
    return UINT32_MAX;
  }
  /// A definition found by lookup at `id` starts or continues the other run.
  void found(uint32_t id) {
    last_ = 1 - last_;
    next_[last_] = id + 1;
  }

private:
  uint32_t next_[2] = {0, 0};
  int last_ = 0;
};

} // namespace exir
