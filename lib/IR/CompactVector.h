//===- IR/CompactVector.h - A vector in one pointer ------------*- C++ -*-===//
//
// An Argument has three lists (ints, names, syms) and uses at most one; as
// std::vectors the empty ones were 48 of its 136 bytes, and a 100k-node
// program holds ~750k Arguments. This vector is one pointer: an empty one
// holds no memory, a filled one keeps its size and capacity (32 bits each) in
// front of the elements, in the same heap block.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace exir {

template <typename T> class CompactVector {
  static_assert(alignof(T) <= 8, "elements follow an 8-byte header");
  static_assert(std::is_nothrow_move_constructible_v<T>, "growing moves the elements");

public:
  using value_type = T;
  using size_type = size_t;
  using reference = T &;
  using const_reference = const T &;
  using iterator = T *;
  using const_iterator = const T *;

  CompactVector() noexcept = default;
  CompactVector(std::initializer_list<T> items) { append(items.begin(), items.end()); }
  template <typename It, typename = decltype(*std::declval<It &>()), typename = decltype(++std::declval<It &>())>
  CompactVector(It first, It last) {
    append(first, last);
  }
  CompactVector(const std::vector<T> &v) { append(v.begin(), v.end()); }
  CompactVector(std::vector<T> &&v) { append(std::make_move_iterator(v.begin()), std::make_move_iterator(v.end())); }
  CompactVector(const CompactVector &o) { append(o.begin(), o.end()); }
  CompactVector(CompactVector &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  CompactVector &operator=(const CompactVector &o) {
    if (this != &o) CompactVector(o).swap(*this);
    return *this;
  }
  CompactVector &operator=(CompactVector &&o) noexcept {
    CompactVector(std::move(o)).swap(*this);
    return *this;
  }
  CompactVector &operator=(const std::vector<T> &v) {
    CompactVector(v).swap(*this);
    return *this;
  }
  CompactVector &operator=(std::vector<T> &&v) {
    CompactVector(std::move(v)).swap(*this);
    return *this;
  }
  CompactVector &operator=(std::initializer_list<T> items) {
    CompactVector(items).swap(*this);
    return *this;
  }
  ~CompactVector() { release(); }

  void swap(CompactVector &o) noexcept { std::swap(h_, o.h_); }

  /// A std::vector copy, for code that takes one.
  explicit operator std::vector<T>() const { return std::vector<T>(begin(), end()); }
  std::vector<T> toVector() const { return std::vector<T>(begin(), end()); }

  size_t size() const noexcept { return h_ ? h_->size : 0; }
  size_t capacity() const noexcept { return h_ ? h_->capacity : 0; }
  bool empty() const noexcept { return size() == 0; }
  T *data() noexcept { return h_ ? elements() : nullptr; }
  const T *data() const noexcept { return h_ ? elements() : nullptr; }
  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size(); }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size(); }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  T &operator[](size_t i) noexcept { return elements()[i]; }
  const T &operator[](size_t i) const noexcept { return elements()[i]; }
  T &at(size_t i) {
    if (i >= size()) throw std::out_of_range("CompactVector::at");
    return elements()[i];
  }
  const T &at(size_t i) const {
    if (i >= size()) throw std::out_of_range("CompactVector::at");
    return elements()[i];
  }
  T &front() noexcept { return elements()[0]; }
  const T &front() const noexcept { return elements()[0]; }
  T &back() noexcept { return elements()[size() - 1]; }
  const T &back() const noexcept { return elements()[size() - 1]; }

  void reserve(size_t n) {
    if (n > capacity()) reallocate(n);
  }
  void push_back(const T &v) { emplace_back(v); }
  void push_back(T &&v) { emplace_back(std::move(v)); }
  template <typename... Args> T &emplace_back(Args &&...args) {
    if (size() == capacity()) {
      // `args` may refer to an element: build the new one before moving them.
      T item(std::forward<Args>(args)...);
      reallocate(grownCapacity(size() + 1));
      return placeLast(std::move(item));
    }
    return placeLast(std::forward<Args>(args)...);
  }
  void pop_back() noexcept {
    elements()[--h_->size].~T();
  }
  void clear() noexcept {
    if (!h_) return;
    std::destroy(begin(), end());
    h_->size = 0;
  }
  void resize(size_t n) { resizeWith(n, [](T *p) { new (p) T(); }); }
  void resize(size_t n, const T &v) {
    T copy(v);
    resizeWith(n, [&](T *p) { new (p) T(copy); });
  }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>> void assign(It first, It last) {
    CompactVector(first, last).swap(*this);
  }
  void assign(size_t n, const T &v) {
    T copy(v);
    clear();
    resize(n, copy);
  }
  /// Inserts before `pos`; returns the inserted element.
  iterator insert(const_iterator pos, T v) {
    size_t at = size_t(pos - begin());
    emplace_back(std::move(v));
    std::rotate(begin() + at, end() - 1, end());
    return begin() + at;
  }
  template <typename It> iterator insert(const_iterator pos, It first, It last) {
    size_t at = size_t(pos - begin()), before = size();
    append(first, last);
    std::rotate(begin() + at, begin() + before, end());
    return begin() + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    size_t at = size_t(first - begin()), n = size_t(last - first);
    if (n == 0) return begin() + at;
    std::move(begin() + at + n, end(), begin() + at);
    std::destroy(end() - n, end());
    h_->size -= uint32_t(n);
    return begin() + at;
  }

  friend bool operator==(const CompactVector &a, const CompactVector &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const CompactVector &a, const std::vector<T> &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator<(const CompactVector &a, const CompactVector &b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

private:
  struct alignas(8) Header {
    uint32_t size;
    uint32_t capacity;
  };
  static_assert(sizeof(Header) == 8);

  T *elements() const noexcept { return reinterpret_cast<T *>(h_ + 1); }
  /// Constructs the element past the last one, then counts it (a constructor
  /// that throws leaves the size as it was).
  template <typename... Args> T &placeLast(Args &&...args) {
    T *p = new (elements() + h_->size) T(std::forward<Args>(args)...);
    ++h_->size;
    return *p;
  }
  static size_t grownCapacity(size_t needed) { return needed <= 4 ? 4 : needed + needed / 2; }
  void reallocate(size_t n) {
    if (n > std::numeric_limits<uint32_t>::max()) throw std::length_error("CompactVector: too many elements");
    void *block = ::operator new(sizeof(Header) + n * sizeof(T));
    auto *h = new (block) Header{0, uint32_t(n)};
    T *to = reinterpret_cast<T *>(h + 1);
    if (h_) {
      for (uint32_t i = 0; i < h_->size; ++i) new (to + i) T(std::move(elements()[i]));
      h->size = h_->size;
    }
    release();
    h_ = h;
  }
  template <typename It> void append(It first, It last) {
    if constexpr (std::is_base_of_v<std::forward_iterator_tag,
                                    typename std::iterator_traits<It>::iterator_category>) {
      size_t n = size_t(std::distance(first, last));
      if (n == 0) return;
      reserve(size() + n);
    }
    for (; first != last; ++first) emplace_back(*first);
  }
  template <typename Make> void resizeWith(size_t n, Make &&make) {
    if (n <= size()) {
      if (h_) {
        std::destroy(begin() + n, end());
        h_->size = uint32_t(n);
      }
      return;
    }
    reserve(n);
    while (h_->size < n) {
      make(elements() + h_->size);
      ++h_->size;
    }
  }
  void release() noexcept {
    if (!h_) return;
    std::destroy(begin(), end());
    h_->~Header();
    ::operator delete(static_cast<void *>(h_));
    h_ = nullptr;
  }

  Header *h_ = nullptr;
};

} // namespace exir
