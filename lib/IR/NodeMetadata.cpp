//===- IR/NodeMetadata.cpp - A node's metadata, strings shared ------------===//
#include "IR/NodeMetadata.h"

#include "IR/StringHash.h"

#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

namespace exir {

SharedString::SharedString(std::string_view s) {
  if (s.empty()) return;
  if (s.size() >= std::numeric_limits<uint32_t>::max()) throw std::length_error("SharedString: string too long");
  void *block = ::operator new(sizeof(Record) + s.size() + 1);
  rec_ = new (block) Record{{1}, uint32_t(s.size())};
  char *out = reinterpret_cast<char *>(rec_ + 1);
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
}

void SharedString::release() noexcept {
  // acq_rel: the last owner sees every other owner's reads done before it frees.
  if (rec_ && rec_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    rec_->~Record();
    ::operator delete(static_cast<void *>(rec_));
  }
  rec_ = nullptr;
}

SharedString StringInterner::intern(std::string_view s) {
  if (s.empty()) return {};
  if (2 * (count_ + 1) > slots_.size()) grow();
  uint64_t hash = hashString(s);
  size_t mask = slots_.size() - 1;
  for (size_t i = size_t(hash) & mask;; i = (i + 1) & mask) {
    Slot &slot = slots_[i];
    if (slot.text.empty()) {
      slot.hash = hash;
      slot.text = SharedString(s);
      ++count_;
      return slot.text;
    }
    if (slot.hash == hash && slot.text.view() == s) return slot.text;
  }
}

void StringInterner::grow() {
  std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(slots_.empty() ? 64 : 2 * slots_.size()));
  size_t mask = slots_.size() - 1;
  for (Slot &slot : old) {
    if (slot.text.empty()) continue;
    size_t i = size_t(slot.hash) & mask;
    while (!slots_[i].text.empty()) i = (i + 1) & mask;
    slots_[i] = std::move(slot);
  }
}

bool NodeMetadata::erase(std::string_view key) {
  for (auto it = items_.begin(); it != items_.end(); ++it)
    if (it->first == key) {
      items_.erase(it);
      return true;
    }
  return false;
}

} // namespace exir
