//===- Serde/PayloadConfig.cpp - PT2 weights configs read in place --------===//
//
// Reads the PayloadConfig shape torch writes with simdjson On-Demand:
//
//   {"config": {FQN: {"path_name": S, "use_pickle": B, "tensor_meta": null |
//     {"dtype": I, "sizes": [SymInt], "strides": [SymInt], "storage_offset":
//      SymInt, "requires_grad": B, "device": {"type": S, "index": null | I},
//      "layout": I}, ...}, ...}, ...}
//
// On-Demand validates only what is visited, so every value, read or skipped,
// is visited and checked as the DOM parser would (structure, literals,
// numbers, string escapes); stage 1 has already checked UTF-8, control
// characters and string ends for the whole text. What this accepts the DOM
// reader therefore accepts too and reads the same way (same fields, same
// values, same order). It gives up, rather than decide, wherever the DOM
// reader would do something special or fail: an integer that is not an int64
// (fractions, exponents, past int64); a duplicate key; a SymInt other than
// {"as_int": I} or a bare integer; a dtype number read specially (0, 14-16) or
// unknown; a layout given by name or unknown; torch 2.1's "meta" wrapper;
// nesting past kMaxDepth; trailing text.
//
//===----------------------------------------------------------------------===//
#include "Serde/PayloadConfig.h"
#include "Serde/ExportJsonImpl.h"

#include <cstring>
#include <initializer_list>
#include <utility>

namespace exir {

namespace {

namespace od = simdjson::ondemand;
using Names = std::initializer_list<std::string_view>;

// Skipped values nested deeper than this send the config to the DOM reader.
constexpr int kMaxDepth = 32;

class Scanner {
public:
  Scanner(PayloadTable &table, const char *end) : table_(table), end_(end) {}

  bool document(od::document &doc) {
    od::object root;
    if (doc.get_object().get(root)) return false;
    bool sawConfig = false;
    bool ok = fields(root, {"config"}, [&](std::string_view key, od::value &value) {
      if (key != "config") return skip(value, 0);
      if (sawConfig) return false; // the DOM reader takes the first one
      sawConfig = true;
      od::object config;
      if (value.get_object().get(config)) return false;
      return fields(config, {}, [&](std::string_view fqn, od::value &meta) {
        PayloadEntry entry;
        entry.fqn = fqn;
        if (!payloadMeta(meta, entry)) return false;
        table_.entries.push_back(entry);
        return true;
      });
    });
    // Nothing may follow the root object.
    return ok && sawConfig && doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
  }

private:
  /// The text of a string whose contents start at `begin` (after its quote)
  /// in place, if it holds no escape. Stage 1 found its closing quote.
  bool inPlace(const char *begin, std::string_view &out) const {
    const char *quote = static_cast<const char *>(std::memchr(begin, '"', size_t(end_ - begin)));
    if (!quote || std::memchr(begin, '\\', size_t(quote - begin))) return false;
    out = std::string_view(begin, size_t(quote - begin));
    return true;
  }
  /// Keeps a string unescaped by simdjson (the DOM reader's unescaping).
  std::string_view keep(std::string_view unescaped) { return table_.unescaped.emplace_back(unescaped); }

  /// The key of `field`: one of `names` if its raw text is that name (the
  /// common case, no search for its end), else its text, unescaped if need be.
  bool key(od::field &field, Names names, std::string_view &out) {
    od::raw_json_string raw = field.key();
    for (std::string_view name : names)
      if (raw.unsafe_is_equal(name)) { // the padded text holds the compared bytes
        out = name;
        return true;
      }
    if (inPlace(raw.raw(), out)) return true;
    std::string_view unescaped;
    if (field.unescaped_key().get(unescaped)) return false;
    out = keep(unescaped);
    return true;
  }
  bool string(od::value &value, std::string_view &out) {
    std::string_view token = value.raw_json_token();
    if (token.empty() || token[0] != '"') return false;
    if (inPlace(token.data() + 1, out)) {
      od::raw_json_string raw;
      return !value.get_raw_json_string().get(raw);
    }
    std::string_view unescaped;
    if (value.get_string().get(unescaped)) return false;
    out = keep(unescaped);
    return true;
  }
  static bool integer(od::value &value, int64_t &out) { return !value.get_int64().get(out); }
  static bool boolean(od::value &value, bool &out) { return !value.get_bool().get(out); }
  static bool null(od::value &value, bool &isNull) { return !value.is_null().get(isNull); }

  /// `{"key": value, ...}`; `field(key, value)` reads each value, and
  /// `names` are the keys it reads.
  template <typename Field> bool fields(od::object &object, Names names, Field &&field) {
    for (auto item : object) {
      od::field f;
      std::string_view k;
      if (std::move(item).get(f) || !key(f, names, k) || !field(k, f.value())) return false;
    }
    return true;
  }
  template <typename Field> bool fields(od::value &value, Names names, Field &&field) {
    od::object object;
    return !value.get_object().get(object) && fields(object, names, field);
  }
  template <typename Item> bool items(od::value &value, Item &&item) {
    od::array array;
    if (value.get_array().get(array)) return false;
    for (auto element : array) {
      od::value v;
      if (std::move(element).get(v) || !item(v)) return false;
    }
    return true;
  }

  /// Any value, unread but checked.
  bool skip(od::value &value, int depth) {
    if (depth > kMaxDepth) return false;
    od::json_type type;
    if (value.type().get(type)) return false;
    switch (type) {
    case od::json_type::object:
      return fields(value, {}, [&](std::string_view, od::value &v) { return skip(v, depth + 1); });
    case od::json_type::array: return items(value, [&](od::value &v) { return skip(v, depth + 1); });
    case od::json_type::string: {
      std::string_view s;
      return string(value, s);
    }
    case od::json_type::number: {
      od::number n;
      return !value.get_number().get(n);
    }
    case od::json_type::boolean: {
      bool b;
      return boolean(value, b);
    }
    case od::json_type::null: {
      bool isNull;
      return null(value, isNull) && isNull;
    }
    }
    return false;
  }

  bool symInt(od::value &value, int64_t &out) {
    od::json_type type;
    if (value.type().get(type)) return false;
    if (type == od::json_type::number) return integer(value, out); // torch 2.1: a bare int
    bool seen = false;
    return fields(value, {"as_int"},
                  [&](std::string_view key, od::value &v) {
                    if (key != "as_int" || seen) return false;
                    seen = true;
                    return integer(v, out);
                  }) &&
           seen;
  }
  bool symInts(od::value &value, uint32_t &at, uint32_t &count) {
    std::vector<int64_t> &ints = table_.ints;
    at = uint32_t(ints.size());
    count = 0;
    return items(value, [&](od::value &item) {
      int64_t v;
      if (!symInt(item, v)) return false;
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

  bool device(od::value &value) {
    unsigned seen = 0;
    return fields(value, {"type", "index"},
                  [&](std::string_view key, od::value &v) {
                    if (key == "type") {
                      std::string_view type;
                      return once(seen, 1) && string(v, type);
                    }
                    if (key == "index") {
                      bool isNull;
                      if (!once(seen, 2) || !null(v, isNull)) return false;
                      int64_t index;
                      return isNull || integer(v, index);
                    }
                    return skip(v, 1);
                  }) &&
           (seen & 1);
  }

  bool tensorMeta(od::value &value, PayloadEntry &e) {
    unsigned seen = 0;
    auto once = [&](unsigned bit) { return Scanner::once(seen, bit); };
    bool ok = fields(value, {"dtype", "sizes", "requires_grad", "device", "strides", "storage_offset", "layout"},
                     [&](std::string_view key, od::value &v) {
      if (key == "dtype") {
        int64_t n;
        if (!once(1) || !integer(v, n) || n == 0 || (n >= 14 && n <= 16)) return false;
        std::optional<ScalarType> t = scalarTypeFromSerialized(n);
        if (t) e.dtype = *t;
        return t.has_value();
      }
      if (key == "sizes") return once(2) && symInts(v, e.sizesAt, e.sizesCount);
      if (key == "requires_grad") {
        bool b;
        return once(4) && boolean(v, b);
      }
      if (key == "device") return once(8) && device(v);
      if (key == "strides") return once(16) && symInts(v, e.stridesAt, e.stridesCount);
      if (key == "storage_offset") return once(32) && symInt(v, e.storageOffset);
      if (key == "layout") {
        int64_t n;
        if (!once(64) || !integer(v, n)) return false;
        for (const auto &name : exportjson::kLayoutNames)
          if (name.value == n) return true;
        return false;
      }
      if (key == "meta") return false; // torch 2.1's TensorValue wrapper
      return skip(v, 1);               // a field of a newer TensorMeta, unread as the DOM reader does
    });
    return ok && seen == 127; // every required field
  }

  bool payloadMeta(od::value &value, PayloadEntry &e) {
    unsigned seen = 0;
    return fields(value, {"path_name", "use_pickle", "tensor_meta"}, [&](std::string_view key, od::value &v) {
      if (key == "path_name") return once(seen, 1) && string(v, e.pathName);
      if (key == "use_pickle") return once(seen, 2) && boolean(v, e.usePickle);
      if (key == "tensor_meta") {
        bool isNull;
        if (!once(seen, 4) || !null(v, isNull)) return false;
        e.tensor = !isNull;
        return isNull || tensorMeta(v, e);
      }
      return skip(v, 1);
    });
  }

  PayloadTable &table_;
  const char *end_; // of the text: string ends are searched up to here
};

} // namespace

std::optional<PayloadTable> scanPayloadConfig(simdjson::padded_string_view text) {
  PayloadTable table;
  // ~300 bytes per entry in torch's output: one allocation, not twenty.
  table.entries.reserve(text.size() / 256);
  table.ints.reserve(text.size() / 64);
  // The parser (its structural index, 4 bytes a token) lives only while the
  // text is read; the table points into the text, not into the parser.
  od::parser parser;
  od::document doc;
  if (parser.iterate(text).get(doc)) return std::nullopt;
  if (!Scanner(table, text.data() + text.size()).document(doc)) return std::nullopt;
  return table;
}

} // namespace exir
