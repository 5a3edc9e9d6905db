//===- Serde/JsonDom.cpp - simdjson DOM helpers with JSON-pointer errors ---===//
//
// Parsing goes through simdjson (gigabytes per second). Everything here that is
// slow - rendering pointers, rewriting bare Infinity/NaN tokens, locating a
// syntax error - only runs when the fast path failed.
//
//===----------------------------------------------------------------------===//
#include "Serde/JsonDom.h"
#include "Serde/Parallel.h"
#include "Support/FileIO.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <iostream>
#include <iterator>
#include <limits>
#include <cstring>
#include <sstream>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace exir::json {

namespace {
constexpr size_t kDefaultParallelMinItems = 8192;
std::atomic<size_t> parallelMinItemsValue{kDefaultParallelMinItems};
} // namespace

size_t parallelMinItems() { return parallelMinItemsValue.load(std::memory_order_relaxed); }

void setParallelMinItems(size_t n) {
  parallelMinItemsValue.store(n == 0 ? kDefaultParallelMinItems : n, std::memory_order_relaxed);
}

std::string escapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string Path::pointer(size_t drop) const {
  std::string out = prefix_;
  size_t count = depth_ - std::min(drop, depth_);
  for (size_t i = 0; i < count; ++i) {
    const auto &segment = segments_[i];
    out += '/';
    if (segment.index >= 0) out += std::to_string(segment.index);
    else out += escapePointerToken(segment.key);
  }
  return out;
}

const char *describe(Element e) {
  using simdjson::dom::element_type;
  switch (e.type()) {
  case element_type::ARRAY: return "an array";
  case element_type::OBJECT: return "an object";
  case element_type::INT64:
  case element_type::UINT64: return "an integer";
  case element_type::DOUBLE: return "a float";
  case element_type::STRING: return "a string";
  case element_type::BOOL: return "a boolean";
  case element_type::NULL_VALUE: return "null";
  }
  return "an unknown value";
}

void Reader::fail(const std::string &message) const {
  std::string pointer = path_.pointer();
  throw Error(message, file_, pointer.empty() ? std::string("/") : pointer);
}

void Reader::failAtParent(const std::string &message) const {
  std::string pointer = path_.pointer(1);
  throw Error(message, file_, pointer.empty() ? std::string("/") : pointer);
}

void Reader::expected(const char *what, Element found) const {
  std::string message = std::string("expected ") + what + ", found " + describe(found);
  if (found.is_string()) {
    std::string_view s = found.get_string().value_unsafe();
    if (s.size() <= 40) message += " '" + std::string(s) + "'";
  }
  fail(message);
}

Object Reader::object(Element e) const {
  if (!e.is_object()) expected("an object", e);
  return e.get_object().value_unsafe();
}

Array Reader::array(Element e) const {
  if (!e.is_array()) expected("an array", e);
  return e.get_array().value_unsafe();
}

std::string_view Reader::string(Element e) const {
  if (!e.is_string()) expected("a string", e);
  return e.get_string().value_unsafe();
}

int64_t Reader::integer(Element e) const {
  using simdjson::dom::element_type;
  switch (e.type()) {
  case element_type::INT64: return e.get_int64().value_unsafe();
  case element_type::UINT64: fail("integer " + std::to_string(e.get_uint64().value_unsafe()) +
                                  " does not fit in int64");
  case element_type::BOOL: expected("an integer", e);
  case element_type::DOUBLE: {
    // Python writes ints as ints; accept an integral float (e.g. 3.0) from hand-made files.
    double d = e.get_double().value_unsafe();
    if (std::trunc(d) == d && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
    expected("an integer", e);
  }
  default: expected("an integer", e);
  }
}

bool Reader::boolean(Element e) const {
  if (!e.is_bool()) expected("a boolean", e);
  return e.get_bool().value_unsafe();
}

namespace {
bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}
} // namespace

double Reader::real(Element e) const {
  using simdjson::dom::element_type;
  switch (e.type()) {
  case element_type::DOUBLE: return e.get_double().value_unsafe();
  case element_type::INT64: return static_cast<double>(e.get_int64().value_unsafe());
  case element_type::UINT64: return static_cast<double>(e.get_uint64().value_unsafe());
  case element_type::STRING: {
    std::string_view s = e.get_string().value_unsafe();
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    bool negative = false;
    std::string_view body = s;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
      negative = body[0] == '-';
      body.remove_prefix(1);
    }
    if (equalsIgnoreCase(body, "inf") || equalsIgnoreCase(body, "infinity"))
      return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    if (equalsIgnoreCase(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
    double value = 0;
    auto res = std::from_chars(body.data(), body.data() + body.size(), value);
    if (!body.empty() && res.ec == std::errc() && res.ptr == body.data() + body.size())
      return negative ? -value : value;
    expected("a float", e);
  }
  default: expected("a float", e);
  }
}

//===----------------------------------------------------------------------===//
// Documents
//===----------------------------------------------------------------------===//

bool quoteBareNonFiniteTokens(std::string_view text, std::string &out) {
  out.clear();
  out.reserve(text.size() + 64);
  bool changed = false, inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
      out += c;
      continue;
    }
    for (std::string_view token : {std::string_view("-Infinity"), std::string_view("Infinity"),
                                   std::string_view("NaN")}) {
      if (text.substr(i, token.size()) == token) {
        out += '"';
        out += token;
        out += '"';
        i += token.size() - 1;
        changed = true;
        goto next;
      }
    }
    out += c;
  next:;
  }
  return changed;
}

namespace {

// A small recursive-descent JSON checker that remembers where it is.
class Locator {
public:
  explicit Locator(std::string_view text) : t_(text) {}

  bool run() {
    skipSpace();
    if (!value(0)) return false;
    skipSpace();
    if (i_ != t_.size()) return fail("expected end of document");
    return true;
  }
  std::string pointer() const {
    std::string out;
    for (const auto &segment : path_) {
      out += '/';
      out += escapePointerToken(segment);
    }
    return out;
  }
  size_t offset() const { return errorAt_; }
  const std::string &message() const { return message_; }

private:
  bool fail(const std::string &what) {
    errorAt_ = i_;
    std::string found;
    if (i_ >= t_.size()) {
      found = "end of input";
    } else {
      unsigned char c = static_cast<unsigned char>(t_[i_]);
      if (c >= 0x20 && c < 0x7F) found = std::string("'") + t_[i_] + "'";
      else {
        char buf[8];
        snprintf(buf, sizeof buf, "0x%02x", c);
        found = std::string("byte ") + buf;
      }
    }
    message_ = what + ", found " + found;
    return false;
  }
  void skipSpace() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
  }
  bool literal(std::string_view word) {
    if (t_.substr(i_, word.size()) != word) return fail("invalid literal");
    i_ += word.size();
    return true;
  }
  bool string(std::string *out) {
    ++i_; // opening quote
    while (true) {
      if (i_ >= t_.size()) return fail("unterminated string");
      char c = t_[i_];
      if (c == '"') {
        ++i_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
      if (c == '\\') {
        if (++i_ >= t_.size()) return fail("unterminated string");
        char esc = t_[i_];
        if (esc == 'u') {
          for (int k = 1; k <= 4; ++k)
            if (i_ + k >= t_.size() || !std::isxdigit(static_cast<unsigned char>(t_[i_ + k]))) {
              i_ += k;
              return fail("invalid \\u escape");
            }
          if (out) out->append("?"); // exact decoding is not needed for a pointer
          i_ += 5;
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(esc) == std::string_view::npos)
          return fail("invalid escape");
        if (out) *out += esc;
        ++i_;
        continue;
      }
      if (out) *out += c;
      ++i_;
    }
  }
  bool number() {
    size_t start = i_;
    if (t_[i_] == '-') ++i_;
    if (t_.substr(i_, 8) == "Infinity") { // old json.dumps output, tolerated
      i_ += 8;
      return true;
    }
    auto digits = [&] {
      size_t s = i_;
      while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
      return i_ > s;
    };
    if (!digits()) return fail("invalid number");
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      if (!digits()) return fail("invalid number");
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (!digits()) return fail("invalid number");
    }
    (void)start;
    return true;
  }
  bool value(int depth) {
    if (depth > 1000) return fail("nesting too deep");
    if (i_ >= t_.size()) return fail("expected a value");
    char c = t_[i_];
    switch (c) {
    case '{': {
      ++i_;
      skipSpace();
      if (i_ < t_.size() && t_[i_] == '}') {
        ++i_;
        return true;
      }
      while (true) {
        skipSpace();
        if (i_ >= t_.size() || t_[i_] != '"') return fail("expected an object key");
        std::string key;
        if (!string(&key)) return false;
        skipSpace();
        if (i_ >= t_.size() || t_[i_] != ':') return fail("expected ':'");
        ++i_;
        skipSpace();
        path_.push_back(key);
        if (!value(depth + 1)) return false;
        path_.pop_back();
        skipSpace();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < t_.size() && t_[i_] == '}') {
          ++i_;
          return true;
        }
        return fail("expected ',' or '}'");
      }
    }
    case '[': {
      ++i_;
      skipSpace();
      if (i_ < t_.size() && t_[i_] == ']') {
        ++i_;
        return true;
      }
      for (size_t index = 0;; ++index) {
        skipSpace();
        path_.push_back(std::to_string(index));
        if (!value(depth + 1)) return false;
        path_.pop_back();
        skipSpace();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < t_.size() && t_[i_] == ']') {
          ++i_;
          return true;
        }
        return fail("expected ',' or ']'");
      }
    }
    case '"': return string(nullptr);
    case 't': return literal("true");
    case 'f': return literal("false");
    case 'n': return literal("null");
    case 'N': return literal("NaN");
    case 'I': return literal("Infinity");
    default:
      if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return number();
      return fail("expected a value");
    }
  }

  std::string_view t_;
  size_t i_ = 0;
  std::vector<std::string> path_;
  std::string message_;
  size_t errorAt_ = 0;
};

} // namespace

bool locateSyntaxError(std::string_view text, std::string &pointer, size_t &offset,
                       std::string &message) {
  Locator locator(text);
  if (locator.run()) return false;
  pointer = locator.pointer();
  offset = locator.offset();
  message = locator.message();
  return true;
}

namespace {

// A dom::element is one internal::tape_ref (document, tape index); simdjson
// has no public accessor for the index.
static_assert(sizeof(Element) == sizeof(simdjson::internal::tape_ref) &&
                  std::is_trivially_copyable_v<Element>,
              "simdjson's dom::element layout changed");
simdjson::internal::tape_ref tapeRefOf(Element e) {
  simdjson::internal::tape_ref ref;
  std::memcpy(static_cast<void *>(&ref), static_cast<const void *>(&e), sizeof ref);
  return ref;
}

// The string_buf offset of the first string at or after tape index `index`
// (looking a few entries ahead: an object's first key follows its '{').
bool firstStringAt(const simdjson::dom::document &doc, size_t index, size_t &offset) {
  for (size_t i = index; i < index + 8; ++i) {
    uint64_t entry = doc.tape[i];
    auto type = static_cast<char>(entry >> 56);
    if (type == 'r') return false; // the document's end
    if (type == '"') {
      offset = entry & simdjson::internal::JSON_VALUE_MASK;
      return true;
    }
    if (type == 'l' || type == 'u' || type == 'd') ++i; // the number's payload entry
  }
  return false;
}

constexpr uintptr_t kReleaseUnit = uintptr_t(2) << 20; // a huge page: splitting one costs more than it frees

// Releases the whole units inside [begin, end) and moves `begin` past them
// (it stays put while the span is shorter than a unit).
void releaseRange(uintptr_t &begin, uintptr_t end) {
  uintptr_t b = (begin + kReleaseUnit - 1) & ~(kReleaseUnit - 1);
  uintptr_t e = end & ~(kReleaseUnit - 1);
  if (e <= b) return;
  madvise(reinterpret_cast<void *>(b), e - b, MADV_DONTNEED);
  begin = e;
}

uintptr_t addressOf(const void *p) { return reinterpret_cast<uintptr_t>(p); }

} // namespace

DomReleaser::DomReleaser(Element first, bool field) {
  simdjson::internal::tape_ref ref = tapeRefOf(first);
  doc_ = ref.doc;
  if (!doc_ || (field && ref.json_index == 0)) {
    doc_ = nullptr;
    return;
  }
  size_t index = ref.json_index - (field ? 1 : 0); // a field starts at its key
  tapeFrom_ = addressOf(doc_->tape.get() + index);
  size_t offset = 0;
  stringsKnown_ = firstStringAt(*doc_, index, offset);
  stringFrom_ = addressOf(doc_->string_buf.get() + offset);
}

void DomReleaser::releaseTo(Element next, bool field, bool strings) {
  simdjson::internal::tape_ref ref = tapeRefOf(next);
  if (!doc_ || ref.doc != doc_) return;
  size_t to = ref.json_index - (field ? 1 : 0);
  uintptr_t tapeTo = addressOf(doc_->tape.get() + to);
  if (tapeTo <= tapeFrom_) return;
  releaseRange(tapeFrom_, tapeTo);
  size_t stringTo = 0;
  if (strings && stringsKnown_ && firstStringAt(*doc_, to, stringTo))
    releaseRange(stringFrom_, addressOf(doc_->string_buf.get() + stringTo));
}

PaddedText &PaddedText::operator=(PaddedText &&other) noexcept {
  if (this == &other) return *this;
  reset();
  bool owned = other.mapping_ == nullptr;
  owned_ = std::move(other.owned_);
  mapping_ = std::exchange(other.mapping_, nullptr);
  mappingSize_ = std::exchange(other.mappingSize_, 0);
  data_ = owned ? owned_.data() : other.data_;
  size_ = owned ? owned_.size() : other.size_;
  other.data_ = nullptr;
  other.size_ = 0;
  return *this;
}

void PaddedText::reset() {
  if (mapping_) munmap(mapping_, mappingSize_);
  mapping_ = nullptr;
  mappingSize_ = 0;
  owned_ = simdjson::padded_string();
  data_ = nullptr;
  size_ = 0;
}

PaddedText PaddedText::map(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return {};
  return mapRange(path, 0, static_cast<uint64_t>(st.st_size));
}

PaddedText PaddedText::mapRange(const std::string &path, uint64_t offset, uint64_t size) {
  PaddedText text;
  if (size == 0) return text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || offset > uint64_t(st.st_size) ||
      size > uint64_t(st.st_size) - offset) {
    ::close(fd);
    return text;
  }
  auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t start = offset / page * page, skew = offset - start;
  auto span = static_cast<size_t>(skew + size);
  // Reserve the range's pages plus one: the range is mapped over the start,
  // and the bytes after its end (the rest of the file's page, zeros past the
  // file's end, then the extra page) are the padding simdjson reads past it.
  static_assert(simdjson::SIMDJSON_PADDING <= 4096, "padding must fit in one page");
  size_t total = (span + page - 1) / page * page + page;
  void *base = mmap(nullptr, total, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    ::close(fd);
    return text;
  }
  void *file = mmap(base, span, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd, off_t(start));
  ::close(fd);
  if (file == MAP_FAILED) {
    munmap(base, total);
    return text;
  }
  text.mapping_ = base;
  text.mappingSize_ = total;
  text.data_ = static_cast<const char *>(base) + skew;
  text.size_ = static_cast<size_t>(size);
  return text;
}

PaddedText loadPadded(const std::string &path) {
  if (path == "-") return simdjson::padded_string(readFileOrStdin(path));
  requireRegularFile(path);
  if (PaddedText mapped = PaddedText::map(path); !mapped.empty()) return mapped;
  simdjson::padded_string buffer;
  auto error = simdjson::padded_string::load(path).get(buffer);
  if (error) throw Error("cannot read file", path);
  return buffer;
}

Document::Document(std::string_view text, const std::string &file) : buffer_(simdjson::padded_string(text)) { parse(file); }

Document::Document(PaddedText buffer, const std::string &file)
    : buffer_(std::move(buffer)) {
  parse(file);
}

Document::Document(PaddedText buffer, const std::string &file, const std::vector<std::string> &deferPatterns)
    : buffer_(std::move(buffer)), file_(file) {
  size_t minBytes = deferMinBytes();
  if (buffer_.size() >= minBytes) {
    std::string_view text(buffer_.data(), buffer_.size());
    deferred_ = findDeferredContainers(text, deferPatterns, minBytes);
  }
  if (!deferred_.empty()) {
    text_ = std::move(buffer_);
    buffer_ = skeletonText(text(), deferred_);
    if (parseSkeleton()) {
      size_t ordinal = 0;
      findPlaceholders(root_, ordinal);
      if (deferredTapeIndex_.size() == deferred_.size()) return;
    }
    // The skeleton does not parse: the whole text's parse says where and why.
    deferred_.clear();
    deferredTapeIndex_.clear();
    buffer_ = std::move(text_);
    parser_ = simdjson::dom::parser();
  }
  parse(file);
}

bool Document::findPlaceholders(Element e, size_t &ordinal) {
  Object o;
  Array a;
  bool object = !e.get(o);
  if (!object && e.get(a)) return true; // a scalar
  size_t k = deferredTapeIndex_.size();
  if (k == deferred_.size()) return false; // all found
  if (deferred_[k].ordinal == ordinal++) {
    if (object != deferred_[k].object || (object ? o.size() : a.size()) != 0)
      return false; // the scan and the parse disagree: the caller reads the whole text
    deferredTapeIndex_.push_back(tapeRefOf(e).json_index);
    return true;
  }
  if (object) {
    for (auto field : o)
      if (!findPlaceholders(field.value, ordinal)) return false;
  } else {
    for (Element item : a)
      if (!findPlaceholders(item, ordinal)) return false;
  }
  return true;
}

const DeferredContainer *Document::deferred(Element e) const {
  if (deferred_.empty()) return nullptr;
  simdjson::internal::tape_ref ref = tapeRefOf(e);
  if (ref.doc != &document_) return nullptr;
  for (size_t k = 0; k < deferred_.size(); ++k)
    if (deferredTapeIndex_[k] == ref.json_index) return &deferred_[k];
  return nullptr;
}

const Document::SyntaxError &Document::syntaxError() const {
  std::call_once(syntaxErrorOnce_, [&] {
    syntaxError_.found = locateSyntaxError(text(), syntaxError_.pointer, syntaxError_.offset, syntaxError_.message);
  });
  return syntaxError_;
}

void Document::failInBatch(const DeferredContainer &container, size_t item, simdjson::error_code error) const {
  if (error == simdjson::MEMALLOC)
    throw Error(std::string("cannot parse JSON: ") + simdjson::error_message(error), file_);
  if (const SyntaxError &e = syntaxError(); e.found)
    throw Error("invalid JSON at byte " + std::to_string(e.offset) + ": " + e.message, file_,
                e.pointer.empty() ? std::string("/") : e.pointer);
  throw Error(std::string("invalid JSON: ") +
                  (error ? simdjson::error_message(error) : "an item of this container does not parse alone"),
              file_, container.pointer + "/" + std::to_string(item));
}

const DeferredContainer *Reader::deferred(Element e) const {
  return document_ ? document_->deferred(e) : nullptr;
}

void Document::keepDocumentOnly() {
  // The parser also holds the structural index (4 bytes per token) and its
  // capacity-sized buffers; the elements need only the document's tape and strings.
  document_ = std::move(parser_.doc);
  parser_ = simdjson::dom::parser();
  root_ = document_.root();
}

namespace {

// What simdjson's DOM writes per byte of a large program document: the
// structural index, the tape and the string copies (measured on the bench
// suite's edge, planned and torch.export documents: 0.70-0.87, 1.00-1.24 and
// 0.90-0.93). The low ends: a page populated past what the parse writes stays
// resident for nothing, one it leaves out only costs its own fault.
constexpr double kStructuralBytesPerByte = 0.7, kTapeBytesPerByte = 1.0, kStringBytesPerByte = 0.9;
constexpr size_t kPrefaultMinBytes = size_t(16) << 20;
constexpr size_t kPrefaultRounds = 128;

/// Faults in the pages the parse is about to write (600 MB for a 200 MB
/// document), on the second core while the parse runs on the first. On
/// virtual machines each first touch of a fresh page is a costly fault: the
/// parse of a 100k-node planned program spent 0.4-0.9 s in them, while
/// populating the same pages in 128 madvise calls takes ~0.1 s.
/// MADV_POPULATE_WRITE only fills page tables, so it does not race with the
/// parser's writes; the buffers advance together, a slice per round, and the
/// thread stops once the parse is done.
class DomPrefaulter {
public:
  DomPrefaulter(simdjson::dom::parser &parser, size_t length) {
#ifdef MADV_POPULATE_WRITE
    if (length < kPrefaultMinBytes || !parser.implementation || !parser.doc.tape || !parser.doc.string_buf)
      return;
    auto range = [&](void *p, double perByte, size_t capacity) {
      auto begin = reinterpret_cast<uintptr_t>(p);
      // Huge pages for the whole buffer (only what is touched is backed):
      // the allocator gives some of these buffers 4 KiB pages, and the part
      // past the estimate is then faulted 512 times as often.
      uintptr_t from = (begin + page_ - 1) & ~(page_ - 1), to = (begin + capacity) & ~(page_ - 1);
      if (to > from) madvise(reinterpret_cast<void *>(from), to - from, MADV_HUGEPAGE);
      size_t size = std::min(capacity, static_cast<size_t>(perByte * double(length)));
      return Range{begin, begin + size};
    };
    ranges_[0] = range(parser.implementation->structural_indexes.get(), kStructuralBytesPerByte,
                       4 * parser.implementation->capacity());
    ranges_[1] = range(parser.doc.tape.get(), kTapeBytesPerByte, 8 * parser.doc.capacity());
    ranges_[2] = range(parser.doc.string_buf.get(), kStringBytesPerByte, parser.doc.capacity());
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error &) {
      // No thread: the parse faults its pages in itself.
    }
#else
    (void)parser, (void)length;
#endif
  }
  ~DomPrefaulter() {
    done_.store(true, std::memory_order_relaxed);
    if (thread_.joinable()) thread_.join();
  }

private:
  // madvise needs page-aligned ranges.
  const uintptr_t page_ = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  struct Range {
    uintptr_t begin = 0, end = 0;
  };
  void run() {
#ifdef MADV_POPULATE_WRITE
    for (size_t round = 1; round <= kPrefaultRounds; ++round) {
      for (Range &r : ranges_) {
        uintptr_t to = r.begin + (r.end - r.begin) * round / kPrefaultRounds;
        uintptr_t from = (r.begin + (r.end - r.begin) * (round - 1) / kPrefaultRounds) & ~(page_ - 1);
        to = (to + page_ - 1) & ~(page_ - 1);
        if (done_.load(std::memory_order_relaxed)) return;
        // Errors (an old kernel: EINVAL) only mean no prefaulting.
        if (to > from && madvise(reinterpret_cast<void *>(from), to - from, MADV_POPULATE_WRITE) != 0) return;
      }
    }
#endif
  }

  Range ranges_[3];
  std::atomic<bool> done_{false};
  std::thread thread_;
};

} // namespace

simdjson::error_code Document::parseBuffer() {
  simdjson::error_code error = simdjson::SUCCESS;
  {
    // Allocating first (parse would) lets the prefaulter see the buffers.
    size_t length = buffer_.size() >= kPrefaultMinBytes ? buffer_.size() : 0;
    if (length && parser_.capacity() < length) error = parser_.allocate(length);
    if (length && !error && parser_.doc.capacity() < length) error = parser_.doc.allocate(length);
    DomPrefaulter prefaulter(parser_, error ? 0 : length);
    error = parser_.parse(buffer_.data(), buffer_.size(), false).get(root_);
  }
  if (!error) {
    // The DOM holds its own copies of every string, so the text can go now;
    // for a 65 MB program that is 65 MB off the peak.
    buffer_.reset();
    keepDocumentOnly();
  }
  return error;
}

bool Document::parseSkeleton() { return !parseBuffer(); }

void Document::parse(const std::string &file) {
  simdjson::error_code error = parseBuffer();
  if (!error) return;
  if (error == simdjson::MEMALLOC || error == simdjson::CAPACITY)
    throw Error(std::string("cannot parse JSON: ") + simdjson::error_message(error), file);

  std::string_view original(buffer_.data(), buffer_.size());
  std::string pointer, message;
  size_t offset = 0;
  if (locateSyntaxError(original, pointer, offset, message))
    throw Error("invalid JSON at byte " + std::to_string(offset) + ": " + message, file,
                pointer.empty() ? std::string("/") : pointer);

  // The text is valid apart from bare non-finite tokens, or simdjson refused
  // something our checker allows (bad UTF-8, huge numbers).
  std::string quoted;
  if (quoteBareNonFiniteTokens(original, quoted)) {
    buffer_ = simdjson::padded_string(quoted);
    auto retry = parser_.parse(buffer_.data(), buffer_.size(), false).get(root_);
    if (!retry) {
      buffer_.reset();
      keepDocumentOnly();
      return;
    }
    error = retry;
  }
  throw Error(std::string("invalid JSON: ") + simdjson::error_message(error), file, "/");
}

} // namespace exir::json
