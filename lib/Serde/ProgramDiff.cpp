//===- Serde/ProgramDiff.cpp - Differences between two programs -----------===//
//
// Both programs are written as artifact JSON and walked side by side: objects
// by key (a key of one side only is reported once), arrays by index (lengths
// first, then the common prefix), anything else by its minified text.
//
//===----------------------------------------------------------------------===//
#include "Serde/ProgramDiff.h"
#include "Serde/JsonDom.h"
#include "Serde/ProgramJson.h"
#include "Support/Error.h"

namespace exir {
namespace {

/// A JSON pointer token: '~' -> "~0", '/' -> "~1".
std::string pointerToken(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

/// Minified JSON of `e`, cut to 80 characters.
std::string shortText(json::Element e) {
  std::string text = simdjson::minify(e);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

class Differ {
public:
  explicit Differ(std::ostream &out) : out_(out) {}
  size_t differences() const { return differences_; }

  void compare(const std::string &path, json::Element a, json::Element b) {
    using Type = simdjson::dom::element_type;
    if (a.type() == Type::OBJECT && b.type() == Type::OBJECT) {
      json::Object oa = a.get_object().value(), ob = b.get_object().value();
      for (auto [key, va] : oa) {
        json::Element vb;
        if (ob.at_key(key).get(vb)) report(path + "/" + pointerToken(key), "only in the first");
        else compare(path + "/" + pointerToken(key), va, vb);
      }
      for (auto [key, vb] : ob) {
        json::Element va;
        if (oa.at_key(key).get(va)) report(path + "/" + pointerToken(key), "only in the second");
      }
      return;
    }
    if (a.type() == Type::ARRAY && b.type() == Type::ARRAY) {
      json::Array xa = a.get_array().value(), xb = b.get_array().value();
      size_t na = xa.size(), nb = xb.size();
      if (na != nb)
        report(path.empty() ? "/" : path, std::to_string(na) + " entries != " + std::to_string(nb) + " entries");
      auto ia = xa.begin(), ib = xb.begin();
      for (size_t i = 0; i < std::min(na, nb); ++i, ++ia, ++ib) compare(path + "/" + std::to_string(i), *ia, *ib);
      return;
    }
    std::string ta = simdjson::minify(a), tb = simdjson::minify(b);
    if (ta != tb) report(path.empty() ? "/" : path, shortText(a) + " != " + shortText(b));
  }

private:
  void report(const std::string &path, const std::string &what) {
    ++differences_;
    out_ << path << ": " << what << "\n";
  }

  std::ostream &out_;
  size_t differences_ = 0;
};

} // namespace

bool diffPrograms(const Program &a, const Program &b, std::ostream &out) {
  if (a.stage != b.stage)
    throw Error(std::string("cannot compare a program of stage '") + stageName(a.stage) + "' with one of stage '" +
                stageName(b.stage) + "'; --diff takes two programs of the same stage");
  // Absolute data-reference paths on both sides, so the directories the two
  // files were read from do not count as a difference by themselves.
  std::string textA = writeProgramJsonString(a, ""), textB = writeProgramJsonString(b, "");
  if (textA == textB) return true;
  json::Document docA(std::string_view(textA), "first"), docB(std::string_view(textB), "second");
  Differ differ(out);
  differ.compare("", docA.root(), docB.root());
  return differ.differences() == 0;
}

} // namespace exir
