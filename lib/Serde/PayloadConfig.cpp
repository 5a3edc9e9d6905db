//===- Serde/PayloadConfig.cpp - PT2 weights configs read in place --------===//
//
// A recursive-descent scan of the PayloadConfig shape torch writes:
//
//   {"config": {FQN: {"path_name": S, "use_pickle": B, "tensor_meta": null |
//     {"dtype": I, "sizes": [SymInt], "strides": [SymInt], "storage_offset":
//      SymInt, "requires_grad": B, "device": {"type": S, "index": null | I},
//      "layout": I}, ...}, ...}, ...}
//
// Every value, read or skipped, is checked against a strict JSON subset, so
// what this accepts the DOM reader accepts too and reads the same way (same
// fields, same values, same order). It gives up, rather than decide, wherever
// the DOM reader would do something special or fail: a string with an escape,
// a control or non-ASCII byte (UTF-8 checks and unescaping stay simdjson's); a
// number that is not a plain int64 (-0, fractions, exponents, 19+ digits); a
// duplicate key; a SymInt other than {"as_int": I} or a bare integer; a dtype
// number read specially (0, 14-16) or unknown; a layout given by name or
// unknown; torch 2.1's "meta" wrapper; nesting past kMaxDepth.
//
//===----------------------------------------------------------------------===//
#include "Serde/PayloadConfig.h"
#include "Serde/ExportJsonImpl.h"

#include <cstring>

namespace exir {

namespace {

// Skipped values nested deeper than this send the config to the DOM reader.
constexpr int kMaxDepth = 32;

class Scanner {
public:
  explicit Scanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  bool document(PayloadTable &table) {
    bool sawConfig = false;
    bool ok = object([&](std::string_view key) {
      if (key != "config") return skip(0);
      if (sawConfig) return false; // the DOM reader takes the first one
      sawConfig = true;
      return object([&](std::string_view fqn) {
        PayloadEntry entry;
        entry.fqn = fqn;
        if (!payloadMeta(entry, table.ints)) return false;
        table.entries.push_back(entry);
        return true;
      });
    });
    space();
    return ok && sawConfig && p_ == end_;
  }

private:
  void space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool consume(char c) {
    space();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }

  bool string(std::string_view &out) {
    if (!consume('"')) return false;
    const char *start = p_;
    for (; p_ < end_; ++p_) {
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out = std::string_view(start, size_t(p_ - start));
        ++p_;
        return true;
      }
      if (c == '\\' || c < 0x20 || c >= 0x80) return false;
    }
    return false;
  }

  bool integer(int64_t &out) {
    space();
    bool negative = p_ < end_ && *p_ == '-';
    if (negative) ++p_;
    const char *digits = p_;
    uint64_t value = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') value = value * 10 + uint64_t(*p_++ - '0');
    size_t count = size_t(p_ - digits);
    if (count == 0 || count > 18 || (count > 1 && *digits == '0')) return false;
    if (negative && value == 0) return false; // simdjson reads -0 as a double
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    out = negative ? -int64_t(value) : int64_t(value);
    return true;
  }

  // The token after a literal must be a separator, which the caller checks.
  bool literal(const char *word) {
    space();
    size_t n = std::strlen(word);
    if (size_t(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }
  bool boolean(bool &out) {
    out = isNext('t');
    return literal(out ? "true" : "false");
  }
  bool isNext(char c) {
    space();
    return p_ < end_ && *p_ == c;
  }

  /// `{}` or `{"key": value, ...}`; `field(key)` reads each value.
  template <typename Field> bool object(Field &&field) {
    if (!consume('{')) return false;
    if (consume('}')) return true;
    do {
      std::string_view key;
      if (!string(key) || !consume(':') || !field(key)) return false;
    } while (consume(','));
    return consume('}');
  }
  template <typename Item> bool array(Item &&item) {
    if (!consume('[')) return false;
    if (consume(']')) return true;
    do {
      if (!item()) return false;
    } while (consume(','));
    return consume(']');
  }

  /// Any value of the subset, unread.
  bool skip(int depth) {
    if (depth > kMaxDepth) return false;
    space();
    if (p_ == end_) return false;
    switch (*p_) {
    case '"': {
      std::string_view s;
      return string(s);
    }
    case '{': return object([&](std::string_view) { return skip(depth + 1); });
    case '[': return array([&] { return skip(depth + 1); });
    case 't': return literal("true");
    case 'f': return literal("false");
    case 'n': return literal("null");
    default: {
      int64_t v;
      return integer(v);
    }
    }
  }

  bool symInt(int64_t &out) {
    if (!isNext('{')) return integer(out); // torch 2.1: a bare int
    bool seen = false;
    return object([&](std::string_view key) {
             if (key != "as_int" || seen) return false;
             seen = true;
             return integer(out);
           }) &&
           seen;
  }
  bool symInts(std::vector<int64_t> &ints, uint32_t &at, uint32_t &count) {
    at = uint32_t(ints.size());
    count = 0;
    return array([&] {
      int64_t v;
      if (!symInt(v)) return false;
      ints.push_back(v);
      ++count;
      return true;
    });
  }

  /// Marks `bit` of `seen`; false if it was already set (a duplicate key).
  static bool once(unsigned &seen, unsigned bit) {
    if (seen & bit) return false;
    seen |= bit;
    return true;
  }

  bool device() {
    unsigned seen = 0;
    return object([&](std::string_view key) {
             if (key == "type") {
               std::string_view type;
               return once(seen, 1) && string(type);
             }
             if (key == "index") {
               if (!once(seen, 2)) return false;
               if (isNext('n')) return literal("null");
               int64_t index;
               return integer(index);
             }
             return skip(1);
           }) &&
           (seen & 1);
  }

  bool tensorMeta(PayloadEntry &e, std::vector<int64_t> &ints) {
    unsigned seen = 0;
    auto once = [&](unsigned bit) { return Scanner::once(seen, bit); };
    bool ok = object([&](std::string_view key) {
      if (key == "dtype") {
        int64_t v;
        if (!once(1) || !integer(v) || v == 0 || (v >= 14 && v <= 16)) return false;
        std::optional<ScalarType> t = scalarTypeFromSerialized(v);
        if (t) e.dtype = *t;
        return t.has_value();
      }
      if (key == "sizes") return once(2) && symInts(ints, e.sizesAt, e.sizesCount);
      if (key == "requires_grad") {
        bool b;
        return once(4) && boolean(b);
      }
      if (key == "device") return once(8) && device();
      if (key == "strides") return once(16) && symInts(ints, e.stridesAt, e.stridesCount);
      if (key == "storage_offset") return once(32) && symInt(e.storageOffset);
      if (key == "layout") {
        int64_t v;
        if (!once(64) || !integer(v)) return false;
        for (const auto &name : exportjson::kLayoutNames)
          if (name.value == v) return true;
        return false;
      }
      if (key == "meta") return false; // torch 2.1's TensorValue wrapper
      return skip(1);                  // a field of a newer TensorMeta, unread as the DOM reader does
    });
    return ok && seen == 127; // every required field
  }

  bool payloadMeta(PayloadEntry &e, std::vector<int64_t> &ints) {
    unsigned seen = 0;
    return object([&](std::string_view key) {
      if (key == "path_name") return once(seen, 1) && string(e.pathName);
      if (key == "use_pickle") return once(seen, 2) && boolean(e.usePickle);
      if (key == "tensor_meta") {
        if (!once(seen, 4)) return false;
        if (isNext('n')) return literal("null");
        e.tensor = true;
        return tensorMeta(e, ints);
      }
      return skip(1);
    });
  }

  const char *p_, *end_;
};

} // namespace

std::optional<PayloadTable> scanPayloadConfig(std::string_view text) {
  PayloadTable table;
  // ~300 bytes per entry in torch's output: one allocation, not twenty.
  table.entries.reserve(text.size() / 256);
  table.ints.reserve(text.size() / 64);
  if (!Scanner(text).document(table)) return std::nullopt;
  return table;
}

} // namespace exir
