//===- IR/TreeSpec.h - torch pytree specs (treespec_dumps JSON) -*- C++ -*-===//
//
// A ModuleCallSignature keeps its in_spec/out_spec as the strings torch wrote
// (torch.utils._pytree.treespec_dumps, protocol 1):
//   [1, {"type": T, "context": C, "children_spec": [nodes]}]
// with leaves {"type": null, "context": null, "children_spec": []}; a dict's
// context is the JSON text of its key list. parseTreeSpec checks one such
// string completely, bounds its nesting, and returns it typed, so every
// reader of the spec (the JSON reader at each tool's input, the emitter's
// container_meta_type) works on a tree that is known to be well formed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exir {

/// Deepest pytree a spec may describe (containers inside containers); real
/// models nest a handful of levels.
constexpr size_t kMaxTreeSpecDepth = 200;

struct TreeSpec {
  /// The container's Python type ("builtins.tuple", ...); empty for a leaf.
  std::string type;
  /// The JSON-encoded context string; nullopt when the context is null.
  std::optional<std::string> context;
  /// A dict's keys, from its context: each key as a string, or (isString
  /// false) as the JSON text of a non-string key such as 1.
  struct Key {
    bool isString = true;
    std::string text;
  };
  std::vector<Key> keys;
  std::vector<TreeSpec> children;

  bool isLeaf() const { return type.empty(); }
  /// Number of leaves below (1 for a leaf).
  size_t leafCount() const;
};

/// Parses and checks a treespec_dumps string. Throws exir::Error whose message
/// names the place inside the spec as a JSON pointer, e.g.
///   "pytree spec /1/children_spec/0: missing 'children_spec'".
TreeSpec parseTreeSpec(std::string_view json);

/// Checks a treespec_dumps string as parseTreeSpec does, for a caller that
/// keeps only the text. A partitioned program repeats one spec per delegate
/// (12,700 times on llama-100k, two distinct texts), so the last few texts
/// accepted on this thread are remembered and not parsed again.
void checkTreeSpec(std::string_view json);

} // namespace exir
