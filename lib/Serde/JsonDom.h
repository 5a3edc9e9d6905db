//===- Serde/JsonDom.h - simdjson DOM helpers with JSON-pointer errors -*- C++ -*-===//
//
// Internal to lib/Serde. Readers walk a simdjson DOM and keep a cheap stack of
// path segments; only when something is wrong is the stack rendered as a JSON
// pointer (RFC 6901) for the one-line error. Syntax errors, which simdjson
// reports without a position, are located by a slow second pass that only runs
// on failure.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Serde/JsonBatch.h"
#include "Support/Error.h"

#include <simdjson.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace exir::json {

using Element = simdjson::dom::element;
using Object = simdjson::dom::object;
using Array = simdjson::dom::array;

/// A stack of object keys / array indices leading to the current element.
class Path {
public:
  Path() { segments_.resize(64); }
  // Pushed and popped for every value read (tens of millions per 100k-node
  // program): a depth counter over storage that only grows, never shrinks.
  void pushKey(std::string_view key) { push({key, -1}); }
  void pushIndex(int64_t index) { push({{}, index}); }
  void pop() { --depth_; }
  /// Replace the last segment (iterating over fields or elements).
  void setKey(std::string_view key) { segments_[depth_ - 1] = {key, -1}; }
  void setIndex(int64_t index) { segments_[depth_ - 1] = {{}, index}; }
  /// "/graph_module/graph/nodes/12" ("" for the document root).
  std::string pointer() const { return pointer(0); }
  /// The pointer without its last `drop` segments.
  std::string pointer(size_t drop) const;
  void setPrefix(std::string prefix) { prefix_ = std::move(prefix); }

private:
  struct Segment {
    std::string_view key;
    int64_t index;
  };
  void push(Segment segment) {
    if (depth_ == segments_.size()) segments_.resize(2 * depth_);
    segments_[depth_++] = segment;
  }

  std::vector<Segment> segments_; // [0, depth_) is the path
  size_t depth_ = 0;
  std::string prefix_;
};

/// Escapes one JSON-pointer reference token ('~' -> "~0", '/' -> "~1").
std::string escapePointerToken(std::string_view token);

/// "an object", "a string", ... for messages of the form "expected X, found Y".
const char *describe(Element e);

/// Typed access to DOM elements; failures throw exir::Error at the current path.
class Reader {
public:
  explicit Reader(std::string file = {}) : file_(std::move(file)) {}
  /// Reads `doc`, whose big containers may be deferred (see deferred()).
  Reader(std::string file, const Document &doc) : file_(std::move(file)), document_(&doc) {}

  Path &path() { return path_; }
  const std::string &file() const { return file_; }

  [[noreturn]] void fail(const std::string &message) const;
  /// Fails at the parent of the current element (e.g. a union object when the
  /// member's key is already on the path).
  [[noreturn]] void failAtParent(const std::string &message) const;
  [[noreturn]] void expected(const char *what, Element found) const;

  Object object(Element e) const;
  Array array(Element e) const;
  std::string_view string(Element e) const;
  int64_t integer(Element e) const;
  bool boolean(Element e) const;
  /// A float field: any JSON number, or the strings Python's float() accepts
  /// ("Infinity", "-Infinity", "inf", "NaN", "1.5", ...).
  double real(Element e) const;
  bool isNull(Element e) const { return e.type() == simdjson::dom::element_type::NULL_VALUE; }

  /// If `e` stands for a container the document left out of its DOM, where
  /// its items are (read them with ItemBatches); else nullptr. Every reader of
  /// a container that Document's patterns may name must ask.
  const DeferredContainer *deferred(Element e) const;
  const Document *document() const { return document_; }

  /// RAII scope for one path segment.
  struct KeyScope {
    KeyScope(Reader &r, std::string_view key) : r(r) { r.path_.pushKey(key); }
    ~KeyScope() { r.path_.pop(); }
    Reader &r;
  };
  struct IndexScope {
    IndexScope(Reader &r, int64_t index) : r(r) { r.path_.pushIndex(index); }
    ~IndexScope() { r.path_.pop(); }
    Reader &r;
  };
  /// One path segment that a loop updates per field / element (cheaper than
  /// a push and pop each time).
  struct LoopScope {
    explicit LoopScope(Reader &r) : r(r) { r.path_.pushIndex(0); }
    ~LoopScope() { r.path_.pop(); }
    void key(std::string_view k) { r.path_.setKey(k); }
    void index(int64_t i) { r.path_.setIndex(i); }
    Reader &r;
  };

private:
  mutable Path path_;
  std::string file_;
  const Document *document_ = nullptr;
};

/// The text of one JSON input followed by simdjson's padding: a read-only
/// mapping of the file, or an owned padded copy (stdin, text in memory). A
/// mapping costs no copy and no freshly zeroed pages, which for a 200 MB
/// program were a quarter of reading it. (A file truncated while it is
/// mapped would fault; every tool writes its output atomically, by rename.)
class PaddedText {
public:
  PaddedText() = default;
  PaddedText(simdjson::padded_string text) : owned_(std::move(text)) {
    data_ = owned_.data();
    size_ = owned_.size();
  }
  PaddedText(PaddedText &&other) noexcept { *this = std::move(other); }
  PaddedText &operator=(PaddedText &&other) noexcept;
  PaddedText(const PaddedText &) = delete;
  PaddedText &operator=(const PaddedText &) = delete;
  ~PaddedText() { reset(); }

  /// Maps `path` read-only with at least SIMDJSON_PADDING readable bytes past
  /// its end; an empty text if the file cannot be mapped (the caller reads it).
  static PaddedText map(const std::string &path);
  /// The same for `size` bytes at `offset` of `path` (a STORED zip member);
  /// the padding then reads the file's next bytes, which simdjson ignores.
  /// Empty if the range is not inside the file or cannot be mapped.
  static PaddedText mapRange(const std::string &path, uint64_t offset, uint64_t size);

  const char *data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return data_ == nullptr; }
  /// Frees the text (the parsed DOM holds copies of its strings).
  void reset();

private:
  simdjson::padded_string owned_;
  void *mapping_ = nullptr;
  size_t mappingSize_ = 0;
  const char *data_ = nullptr;
  size_t size_ = 0;
};

/// Gives the memory of a converted run of elements back to the system while
/// the rest of the document is still being read, which takes the document's
/// size off the peak (the tape and strings of a 200 MB program are 430 MB,
/// alive beside the finished IR until the document is freed). A run starts
/// at `first`; consumedUpTo(next) says that everything from there to `next`
/// (exclusive, in document order) will never be read again, and whole 2 MB
/// units of tape and string storage inside that span are released (their
/// pages read as zeros afterwards). Spans of different releasers must not
/// overlap; the elements themselves must stay unread, and so must any string
/// view into them (convert to owned strings first).
class DomReleaser {
public:
  /// A run of array elements from `first`, or with `field`, of object fields
  /// from the one whose value is `first` (its key included).
  explicit DomReleaser(Element first, bool field = false);
  /// Array elements: everything before element `next` is consumed.
  void consumedUpTo(Element next) { releaseTo(next, false, true); }
  /// Object fields: everything before the field whose value is `next`, its
  /// key not included; `strings` false keeps the strings (and keys) alive.
  void consumedUpToField(Element next, bool strings = true) { releaseTo(next, true, strings); }

private:
  void releaseTo(Element next, bool field, bool strings);

  const simdjson::dom::document *doc_ = nullptr;
  uintptr_t tapeFrom_ = 0;   // start of the tape not yet released
  uintptr_t stringFrom_ = 0; // start of the strings not yet released
  bool stringsKnown_ = false;
};

/// Owns the parser and the padded input of one document.
class Document {
public:
  /// Parses `text`. Bare Infinity / -Infinity / NaN tokens (old json.dumps
  /// output) are accepted by quoting them before a retry. Syntax errors throw
  /// exir::Error with the JSON pointer and byte offset of the problem.
  Document(std::string_view text, const std::string &file);
  /// Takes an already padded buffer (see loadPadded) without copying it.
  Document(PaddedText buffer, const std::string &file);
  /// The same, but the containers at `deferPatterns` (see
  /// findDeferredContainers) of deferMinBytes() or more stay out of the DOM:
  /// the reader (a Reader made with this document) reads them in batches.
  Document(PaddedText buffer, const std::string &file, const std::vector<std::string> &deferPatterns);
  Document(const Document &) = delete;
  Document &operator=(const Document &) = delete;

  Element root() const { return root_; }

  /// The container `e` stands for, if it was left out (see Reader::deferred).
  const DeferredContainer *deferred(Element e) const;
  /// The whole text (kept while containers are deferred).
  std::string_view text() const { return {text_.data(), text_.size()}; }
  /// Whether the whole text is JSON apart from bare NaN / Infinity tokens
  /// (a slow scan, once): a batch that fails then has such tokens to quote.
  bool textIsValid() const { return !syntaxError().found; }
  /// Reports a batch that does not parse (or holds another number of items
  /// than the scan found) as the whole document's parse would.
  [[noreturn]] void failInBatch(const DeferredContainer &container, size_t item,
                                simdjson::error_code error) const;

private:
  void parse(const std::string &file);
  /// parse() of the skeleton; false (and nothing thrown) if it fails.
  bool parseSkeleton();
  /// Records the tape index of every deferred container's placeholder, the
  /// skeleton's containers counted in document order from `e` on; false once
  /// all are found or where one is not the empty container expected.
  bool findPlaceholders(Element e, size_t &ordinal);
  /// Parses buffer_ into document_ (freeing buffer_) or says why not.
  simdjson::error_code parseBuffer();

  /// Keeps the parsed tape and strings and frees the parser's other buffers.
  void keepDocumentOnly();

  PaddedText buffer_;
  simdjson::dom::parser parser_;
  simdjson::dom::document document_; // the parse result, moved out of parser_
  Element root_;
  std::string file_;
  PaddedText text_; // the original text while containers are deferred
  std::vector<DeferredContainer> deferred_;
  std::vector<size_t> deferredTapeIndex_; // of each placeholder in document_
  /// The whole text's first syntax error (locateSyntaxError), found once
  /// whichever reading thread asks first.
  struct SyntaxError {
    bool found = false;
    std::string pointer, message;
    size_t offset = 0;
  };
  const SyntaxError &syntaxError() const;
  mutable std::once_flag syntaxErrorOnce_;
  mutable SyntaxError syntaxError_;
};

/// A file ("-" = stdin) as padded text: mapped where possible, else read.
PaddedText loadPadded(const std::string &path);

/// Quotes bare Infinity, -Infinity and NaN tokens outside strings, which old
/// json.dumps output contains. Returns false if there were none.
bool quoteBareNonFiniteTokens(std::string_view text, std::string &out);

/// Locates a syntax error by a slow character scan: the JSON pointer of the
/// innermost container and the byte offset. Returns false if the text is valid.
bool locateSyntaxError(std::string_view text, std::string &pointer, size_t &offset,
                       std::string &message);

} // namespace exir::json
