//===- Serde/JsonBatch.h - Big JSON containers read in batches --*- C++ -*-===//
//
// Internal to lib/Serde. simdjson's DOM of a whole 200 MB program takes ~2.6
// bytes per byte of text (structural index, tape, string copies): ~550 MB of
// pages the kernel must clear, half of exir-emit's time on a 100k-node
// program. A Document can instead leave its biggest containers (the nodes,
// tensor_values and constants of a program) out of the DOM: a scan that
// allocates nothing but one offset per item finds them and the commas between
// their items, the rest of the text (the skeleton) is parsed as usual with
// each of them left empty, and their items are parsed later, a batch at a time,
// into one small DOM that is reused. The readers ask the Document whether an
// element is such a placeholder (Reader::deferred) and read it with
// ItemBatches.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace exir::json {

class Document;

/// A container left out of the skeleton: where its items are in the text.
struct DeferredContainer {
  std::string pointer; // JSON pointer of the container ("/graph_module/graph/nodes")
  bool object = false;
  /// Its place among the skeleton's containers in document order (the root
  /// is 0): how the Document finds its placeholder even where keys repeat.
  size_t ordinal = 0;
  /// Offsets in the text: the opening bracket, every comma between two items,
  /// the closing bracket; item k lies between separators[k] and separators[k + 1].
  std::vector<size_t> separators;
  size_t size() const { return separators.size() - 1; }
};

/// Containers bigger than this are read in batches (where the reader allows).
size_t deferMinBytes();
/// For tests: defers containers from `n` bytes on (0 restores the default).
void setDeferMinBytes(size_t n);
/// For tests: whether the scan may use AVX2 where the CPU has it (the
/// default); returns whether it now does.
bool setWideScan(bool allowed);

/// The containers of `text` at `patterns` (JSON pointers of plain keys; a "*"
/// segment matches any key) of at least `minBytes` with two items or more,
/// in document order. Empty when the text is not plain JSON (unbalanced,
/// bare NaN / Infinity tokens, ...) or a pattern's container appears twice:
/// the whole DOM then reads it and reports what is wrong.
std::vector<DeferredContainer> findDeferredContainers(std::string_view text,
                                                      const std::vector<std::string> &patterns,
                                                      size_t minBytes);

/// The text with every container's items cut out (each becomes [] or {}),
/// followed by simdjson's padding.
simdjson::padded_string skeletonText(std::string_view text, const std::vector<DeferredContainer> &containers);

/// The key of object item `index` of `container` in `text` as written, or
/// false if it is not a plain string (escapes): the caller then reads the
/// keys from the batches.
bool plainKey(std::string_view text, const DeferredContainer &container, size_t index, std::string_view &key);

/// Parses the items of one deferred container a batch at a time. Each thread
/// needs its own. Elements and keys it hands out stay valid only until the
/// callback returns.
class ItemBatches {
public:
  ItemBatches(const Document &doc, const DeferredContainer &container) : doc_(doc), container_(container) {}

  /// Calls f(index, key, value) for items [begin, end) in order (key is empty
  /// for array items).
  template <class F> void forEach(size_t begin, size_t end, F &&f) {
    for (size_t b = begin; b < end;) {
      size_t e = batchEnd(b, end);
      size_t i = b;
      if (container_.object) {
        for (auto field : parseObject(b, e)) f(i++, field.key, field.value);
      } else {
        for (simdjson::dom::element item : parseArray(b, e)) f(i++, std::string_view(), item);
      }
      b = e;
    }
  }

private:
  size_t batchEnd(size_t begin, size_t end) const;
  /// The buffer, grown to hold `size` bytes and simdjson's padding.
  char *buffer(size_t size);
  /// Items [begin, end) in their brackets, in the buffer; returns the size.
  size_t wrap(size_t begin, size_t end);
  /// Items [begin, end) parsed into the reused DOM.
  simdjson::dom::element parse(size_t begin, size_t end);
  simdjson::dom::array parseArray(size_t begin, size_t end);
  simdjson::dom::object parseObject(size_t begin, size_t end);

  const Document &doc_;
  const DeferredContainer &container_;
  simdjson::dom::parser parser_;
  std::unique_ptr<char[]> buffer_; // one batch's text and simdjson's padding
  size_t capacity_ = 0;
};

} // namespace exir::json
