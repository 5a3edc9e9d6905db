//===- Edge/EdgeUtil.h - Small helpers for graph-rewriting passes -*- C++ -*-===//
//
// Decompositions replace one node by a short sequence of nodes. These helpers
// keep that code short: argument lookup with the op's fixed defaults, creating
// intermediate tensor values with their metadata, and rebuilding the node list.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"
#include "IR/OrderedMap.h"
#include "IR/StringHash.h"

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace exir::edge {

/// The passes look up every node's target string (50-60 characters) and value
/// names in maps; std::hash<std::string> walks them byte by byte, hashString
/// (IR/StringHash.h) a word at a time.
struct FastStringHash {
  size_t operator()(const std::string &s) const noexcept { return size_t(hashString(s)); }
};
template <typename V> using StringMap = std::unordered_map<std::string, V, FastStringHash>;

/// The op a node calls, e.g. {"aten", "conv2d", "default"} (any dialect).
OpTarget targetOf(const Node &node);
/// parseTarget once per distinct target string. A pass that looks at every
/// node of a 100k-node graph otherwise splits the same few dozen targets (and
/// allocates their parts) once per node.
class TargetCache {
public:
  const OpTarget &operator()(const std::string &target) {
    auto [slot, unseen] = parsed_.try_emplace(target);
    if (unseen) slot->second = parseTarget(target);
    return slot->second;
  }
  const OpTarget &operator()(const Node &node) { return (*this)(node.target); }

private:
  StringMap<OpTarget> parsed_;
};
/// The distinct op targets of a program: every method's graph and the
/// branches of its higher-order ops. One sweep over the nodes; to_edge asks it
/// whether a pass has anything to rewrite (PassTrigger) before the pass sweeps
/// the graph itself.
class TargetCensus {
public:
  explicit TargetCensus(const Program &program);
  struct Entry {
    std::string target;
    OpTarget parsed;
  };
  const std::vector<Entry> &entries() const { return entries_; }

private:
  void add(const Graph &graph);
  StringMap<size_t> seen_; // target -> its entry
  std::vector<Entry> entries_;
};

/// Which ops a pass rewrites, as data (the last column of Passes.def). A pass
/// whose trigger matches no target of the census would leave the program as
/// it is. A trigger may match more than the pass rewrites, never less.
struct PassTrigger {
  enum class Kind { Always, AtenOps, Matching } kind = Kind::Always;
  const char *ops = "";                                   // AtenOps: names, space-separated
  bool (*matches)(const std::string &target, const OpTarget &parsed) = nullptr; // Matching
  /// True if some target in the census may give the pass work.
  bool anyIn(const TargetCensus &census) const;
};
/// The pass looks at more than op targets: it always runs.
constexpr PassTrigger always() { return {}; }
/// The pass rewrites only aten ops of these names (any overload, ATen or Edge dialect).
constexpr PassTrigger atenOps(const char *names) { return {PassTrigger::Kind::AtenOps, names, nullptr}; }
/// The pass rewrites only ops for which `matches` is true.
constexpr PassTrigger matching(bool (*matches)(const std::string &, const OpTarget &)) {
  return {PassTrigger::Kind::Matching, "", matches};
}

/// True if the node calls ns::name.overload in the ATen or Edge dialect.
bool calls(const Node &node, const char *ns, const char *name, const char *overload);

/// The argument named `name`, or nullptr when the node did not pass it
/// (torch.export omits arguments left at their default).
const Argument *findArg(const Node &node, const std::string &name);
/// The argument named `name`, or `fallback` (the schema default) when omitted.
Argument argOr(const Node &node, const std::string &name, Argument fallback);
/// The argument named `name`; throws naming the node when it is missing.
const Argument &requireArg(const Node &node, const std::string &name);

NamedArgument positional(const std::string &name, Argument arg);
NamedArgument keyword(const std::string &name, Argument arg);

/// Metadata of a tensor value; throws if the value has none.
const TensorMeta &metaOf(const Graph &graph, const std::string &name);
/// Metadata of the node's first tensor operand (lists included), or nullptr.
const TensorMeta *firstTensorInputMeta(const Graph &graph, const Node &node);
/// Adds a fresh tensor value named after `base` and returns its name.
std::string addTensorValue(Graph &graph, const std::string &base, TensorMeta meta);
/// Fresh value names like Graph::freshName (base, base_1, ...), remembering the
/// next suffix per base so naming n values with one base stays linear.
class FreshNames {
public:
  explicit FreshNames(const Graph &graph) : graph_(graph) {}
  std::string operator()(const std::string &base);

private:
  const Graph &graph_;
  StringMap<int> next_;
};

/// Contiguous-strided metadata with the given dtype and static sizes.
TensorMeta makeMeta(ScalarType dtype, const std::vector<SymInt> &sizes, const Device &device = {});

/// A call node `target(inputs) -> outName` (single tensor output), copying the
/// metadata (stack trace, module stack) of `origin` so errors still point at the
/// user's source line.
Node makeCall(const std::string &target, std::vector<NamedArgument> inputs, const std::string &outName,
              const Node *origin);

/// Builds the aten nodes one node decomposes into (the C++ decompositions):
/// each call gets a fresh result name, its metadata in tensor_values and the
/// origin's stack trace. `sizes` reads a value's static sizes and throws
/// `dynamicMessage` at the origin node for a symbolic one.
class NodeEmitter {
public:
  /// Result names are `namePrefix` + the op's name ("einsum_permute").
  NodeEmitter(Graph &graph, const Node &origin, std::string dynamicMessage, std::string namePrefix = "")
      : graph(graph), origin(origin), fresh_(graph), dynamicMessage_(std::move(dynamicMessage)),
        namePrefix_(std::move(namePrefix)) {}

  /// aten::name.overload(args) -> a fresh value with `meta`, or -> `result`
  /// (an existing value: the origin's own output) when given.
  std::string call(const char *name, const char *overload, std::vector<NamedArgument> args, TensorMeta meta,
                   const std::string &result = "");
  /// Contiguous metadata with `like`'s dtype and device and static `sizes`.
  TensorMeta meta(const std::string &like, const std::vector<int64_t> &sizes) const;
  /// The same with sizes that may be symbolic.
  TensorMeta meta(const std::string &like, const std::vector<SymInt> &sizes) const;
  /// The static sizes of `value`.
  std::vector<int64_t> sizes(const std::string &value) const;
  /// The nodes emitted so far, in order.
  std::vector<Node> take() { return std::move(nodes_); }

  Graph &graph;
  const Node &origin;

private:
  FreshNames fresh_;
  std::string dynamicMessage_, namePrefix_;
  std::vector<Node> nodes_;
};
/// The metadata makeCall copies from `origin` (stack trace, module stack, ...), into `n`.
void copyCallMetadata(const Node &origin, Node &n);
/// copyCallMetadata, moving the map out of `origin` where it holds nothing else.
void moveCallMetadata(Node &origin, Node &n);

/// Replaces every node for which `rewrite` returns a sequence; other nodes are kept.
/// Recurses into subgraph arguments (cond branches). `rewrite` sees the graph
/// with its node list being rewritten in place: it must not use graph.nodes.
/// Returns how many nodes were rewritten.
size_t rewriteNodes(Graph &graph, const std::function<std::optional<std::vector<Node>>(Graph &, Node &)> &rewrite);

/// Calls fix(std::string &) on every value name `arg` refers to (tensors, empty
/// optional slots included, symbolic values, custom objects), to rename them in place.
template <typename Fix> void renameNamesIn(Argument &arg, const Fix &fix) {
  switch (arg.kind) {
  case ArgKind::Tensor: case ArgKind::OptionalTensor: case ArgKind::CustomObj:
    fix(arg.name);
    break;
  case ArgKind::Tensors: case ArgKind::OptionalTensors:
    for (auto &n : arg.names) fix(n);
    break;
  case ArgKind::NestedTensors:
    for (auto &l : arg.mutableNestedTensors())
      for (auto &n : l) fix(n);
    break;
  case ArgKind::SymInt: case ArgKind::SymInts: case ArgKind::SymBool: case ArgKind::SymBools:
  case ArgKind::SymFloat: case ArgKind::SymFloats:
    for (auto &s : arg.syms)
      if (s.isName) fix(s.name);
    break;
  case ArgKind::StringToArgument:
    for (auto &[k, v] : arg.mutableMapping()) renameNamesIn(v, fix);
    break;
  default:
    break;
  }
}

/// renameNamesIn over every argument of a method's graph (node inputs and
/// outputs, graph inputs and outputs) and of its signature; not subgraphs.
template <typename Fix> void renameNamesInMethod(ExportedProgram &ep, const Fix &fix) {
  Graph &g = ep.graph;
  for (Node &n : g.nodes) {
    for (auto &in : n.inputs) renameNamesIn(in.arg, fix);
    for (auto &out : n.outputs) renameNamesIn(out, fix);
  }
  for (auto &in : g.inputs) renameNamesIn(in, fix);
  for (auto &o : g.outputs) renameNamesIn(o, fix);
  for (auto &spec : ep.signature.inputSpecs) renameNamesIn(spec.arg, fix);
  for (auto &spec : ep.signature.outputSpecs) renameNamesIn(spec.arg, fix);
}

/// Renames a value everywhere in a method: uses, outputs, metadata tables and the signature.
void renameValue(ExportedProgram &ep, const std::string &from, const std::string &to);
/// Several renames in one sweep over the method (linear; renameValue per value is not).
void renameValues(ExportedProgram &ep, const std::unordered_map<std::string, std::string> &renames);

/// Replaces every use of value `from` by `to` in node inputs and graph outputs
/// (definitions are left alone).
void replaceUses(ExportedProgram &ep, const std::string &from, const std::string &to);

/// Replaces uses (node inputs, graph outputs, output specs) of every key of
/// `renames` by its value in one sweep, and drops the renamed values' metadata.
void renameUses(ExportedProgram &ep, const std::unordered_map<std::string, std::string> &renames);

/// "<stack trace's last frame>" for error messages, or "" when there is none.
std::string userFrame(const Node &node);

constexpr size_t kNoPosition = SIZE_MAX;

/// The position of `key` among the items of `map` (begin() + it), or
/// kNoPosition: per-item state lives in vectors, looked up once per key.
/// OrderedMap keeps its items in one array, so the found value's address
/// says where it is.
template <typename V> size_t positionOf(const OrderedMap<V> &map, const std::string &key) {
  const V *value = map.find(key);
  if (!value) return kNoPosition;
  const auto &first = *map.begin();
  return size_t(reinterpret_cast<const char *>(value) - reinterpret_cast<const char *>(&first.second)) /
         sizeof(first);
}

/// positionOf, first comparing the few items from `hint` on (one past the
/// last position found): constants and placeholders are mostly looked up in
/// table order, and a compare in place costs less than a lookup's cache
/// misses in a table of 100k+ entries. Keys are unique, so the result is the same.
template <typename V> size_t positionFrom(const OrderedMap<V> &map, const std::string &key, size_t &hint) {
  constexpr size_t kTries = 4;
  for (size_t pos = hint, end = std::min(map.size(), hint + kTries); pos < end; ++pos)
    if ((map.begin() + std::ptrdiff_t(pos))->first == key) {
      hint = pos + 1;
      return pos;
    }
  size_t pos = positionOf(map, key);
  if (pos != kNoPosition) hint = pos + 1;
  return pos;
}

/// Integer list of an int[] / SymInt[] argument whose elements are all concrete.
std::optional<std::vector<int64_t>> concreteInts(const Argument &arg);
/// Sizes of a value as SymInt list (for building metadata).
std::vector<SymInt> sizesOf(const Graph &graph, const std::string &name);

} // namespace exir::edge
