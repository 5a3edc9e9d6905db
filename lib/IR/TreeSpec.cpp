//===- IR/TreeSpec.cpp - torch pytree specs (treespec_dumps JSON) ---------===//
//
// The spec text is parsed with nlohmann::json, whose parser is iterative; its
// callback refuses nesting beyond the bound before any recursive walk (ours,
// or the json value's) can run deep. The typed tree is then built recursively
// within that bound.
//
//===----------------------------------------------------------------------===//
#include "IR/TreeSpec.h"
#include "Support/Error.h"

#include <nlohmann/json.hpp>

#include <array>

namespace exir {

namespace {

using Json = nlohmann::json;

// Each pytree level is an object inside a children_spec array: two JSON levels.
constexpr int kMaxJsonDepth = int(2 * kMaxTreeSpecDepth) + 4;
// A dict's key list is flat; keys themselves are scalars (or tuples of them).
constexpr int kMaxContextDepth = 16;

struct TooDeep {};

/// `tooDeep` is the message when the text nests deeper than `maxDepth`.
Json parseBounded(std::string_view text, int maxDepth, const std::string &what, const std::string &tooDeep) {
  try {
    return Json::parse(text.begin(), text.end(), [&](int depth, Json::parse_event_t, Json &) {
      if (depth > maxDepth) throw TooDeep{};
      return true;
    });
  } catch (const TooDeep &) {
    throw Error(tooDeep);
  } catch (const Json::exception &e) {
    // nlohmann's what() is "[json.exception.parse_error.101] parse error at ...".
    std::string message = e.what();
    auto bracket = message.find("] ");
    throw Error(what + " is not valid JSON: " + (bracket == std::string::npos ? message : message.substr(bracket + 2)));
  }
}

const char *typeName(const Json &j) { return j.type_name(); }

TreeSpec node(const Json &j, const std::string &where, size_t depth) {
  auto fail = [&](const std::string &message) -> Error {
    return Error("pytree spec " + where + ": " + message);
  };
  if (depth > kMaxTreeSpecDepth)
    throw Error("pytree spec nests deeper than " + std::to_string(kMaxTreeSpecDepth) + " containers");
  if (!j.is_object()) throw fail(std::string("expected an object {type, context, children_spec}, got ") + typeName(j));
  for (const char *key : {"type", "context", "children_spec"})
    if (!j.contains(key)) throw fail(std::string("missing '") + key + "'");
  const Json &type = j.at("type"), &context = j.at("context"), &children = j.at("children_spec");
  if (!type.is_null() && !type.is_string())
    throw fail(std::string("'type' must be a string or null, got ") + typeName(type));
  if (!context.is_null() && !context.is_string())
    throw fail(std::string("'context' must be a string (JSON text) or null, got ") + typeName(context));
  if (!children.is_array()) throw fail(std::string("'children_spec' must be an array, got ") + typeName(children));
  TreeSpec spec;
  if (type.is_null()) {
    if (!children.empty() || !context.is_null())
      throw fail("a leaf (type null) must have a null context and no children");
    return spec;
  }
  spec.type = type.get<std::string>();
  if (spec.type.empty()) throw fail("'type' is an empty string");
  if (context.is_string()) spec.context = context.get<std::string>();
  spec.children.reserve(children.size());
  for (size_t i = 0; i < children.size(); ++i)
    spec.children.push_back(node(children[i], where + "/children_spec/" + std::to_string(i), depth + 1));
  if (spec.type == "builtins.dict" || spec.type == "collections.OrderedDict") {
    std::string what = "pytree spec " + where + "/context";
    Json keys = parseBounded(spec.context ? *spec.context : std::string("null"), kMaxContextDepth, what,
                             what + " nests deeper than " + std::to_string(kMaxContextDepth) + " levels");
    if (!keys.is_array())
      throw fail(std::string("the context of a ") + spec.type + " must be a JSON list of keys, got " + typeName(keys));
    if (keys.size() != spec.children.size())
      throw fail(std::string("a ") + spec.type + " with " + std::to_string(spec.children.size()) + " children has " +
                 std::to_string(keys.size()) + " keys");
    for (const Json &k : keys) spec.keys.push_back(k.is_string() ? TreeSpec::Key{true, k.get<std::string>()}
                                                                 : TreeSpec::Key{false, k.dump()});
  }
  return spec;
}

} // namespace

size_t TreeSpec::leafCount() const {
  if (isLeaf()) return 1;
  size_t n = 0;
  for (const auto &c : children) n += c.leafCount();
  return n;
}

TreeSpec parseTreeSpec(std::string_view text) {
  Json doc = parseBounded(text, kMaxJsonDepth, "pytree spec",
                          "pytree spec nests deeper than " + std::to_string(kMaxTreeSpecDepth) + " containers");
  if (!doc.is_array() || doc.size() != 2)
    throw Error(std::string("pytree spec must be [protocol, node], got ") +
                (doc.is_array() ? "an array of " + std::to_string(doc.size()) : std::string(typeName(doc))));
  if (!doc[0].is_number_integer() || doc[0].get<int64_t>() != 1)
    throw Error("pytree spec /0: unsupported protocol " + doc[0].dump() + " (expected 1)");
  return node(doc[1], "/1", 0);
}

void checkTreeSpec(std::string_view text) {
  // Only accepted texts are remembered (a rejected one throws before), so a
  // hit is a text that parseTreeSpec accepted; long texts are not kept.
  constexpr size_t kSlots = 8, kMaxRemembered = 64 * 1024;
  thread_local std::array<std::string, kSlots> accepted;
  thread_local size_t next = 0;
  for (const std::string &t : accepted)
    if (!t.empty() && t == text) return;
  parseTreeSpec(text);
  if (text.size() > kMaxRemembered) return;
  accepted[next] = std::string(text);
  next = (next + 1) % kSlots;
}

} // namespace exir
