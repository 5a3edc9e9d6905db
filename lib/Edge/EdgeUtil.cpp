//===- Edge/EdgeUtil.cpp - Small helpers for graph-rewriting passes -------===//
#include "Edge/EdgeUtil.h"
#include "Edge/SymSize.h"
#include "Support/Error.h"

#include <string_view>

namespace exir::edge {

OpTarget targetOf(const Node &node) { return parseTarget(node.target); }

bool calls(const Node &node, const char *ns, const char *name, const char *overload) {
  OpTarget t = parseTarget(node.target);
  if (t.dialect != TargetDialect::Aten && t.dialect != TargetDialect::Edge) return false;
  return t.ns == ns && t.name == name && t.overload == overload;
}

const Argument *findArg(const Node &node, const std::string &name) {
  const NamedArgument *in = node.input(name);
  return in ? &in->arg : nullptr;
}

Argument argOr(const Node &node, const std::string &name, Argument fallback) {
  const Argument *a = findArg(node, name);
  return a ? *a : std::move(fallback);
}

const Argument &requireArg(const Node &node, const std::string &name) {
  const Argument *a = findArg(node, name);
  if (!a) throw Error("node " + node.displayName() + " (" + node.target + ") has no argument '" + name + "'");
  return *a;
}

NamedArgument positional(const std::string &name, Argument arg) {
  return NamedArgument{name, std::move(arg), ArgumentPassing::Positional};
}
NamedArgument keyword(const std::string &name, Argument arg) {
  return NamedArgument{name, std::move(arg), ArgumentPassing::Keyword};
}

const TensorMeta &metaOf(const Graph &graph, const std::string &name) {
  const TensorMeta *m = graph.tensorValues.find(name);
  if (!m) throw Error("tensor value '" + name + "' has no metadata in tensor_values");
  return *m;
}

std::string addTensorValue(Graph &graph, const std::string &base, TensorMeta meta) {
  std::string name = graph.freshName(base);
  graph.tensorValues.set(name, std::move(meta));
  return name;
}

std::string FreshNames::operator()(const std::string &base) {
  int &k = next_[base];
  for (;; ++k) {
    std::string candidate = k == 0 ? base : base + "_" + std::to_string(k);
    if (!graph_.holdsValueName(candidate)) {
      ++k;
      return candidate;
    }
  }
}

TensorMeta makeMeta(ScalarType dtype, const std::vector<SymInt> &sizes, const Device &device) {
  TensorMeta m;
  m.dtype = dtype;
  m.sizes = sizes;
  m.strides = symContiguousStrides(sizes);
  m.storageOffset = SymInt::of(0);
  m.device = device;
  return m;
}

Node makeCall(const std::string &target, std::vector<NamedArgument> inputs, const std::string &outName,
              const Node *origin) {
  Node n;
  n.target = target;
  n.inputs = std::move(inputs);
  n.outputs.push_back(Argument::tensor(outName));
  if (origin) {
    copyCallMetadata(*origin, n);
    n.isHopSingleTensorReturn = origin->isHopSingleTensorReturn;
  }
  return n;
}

// string_views: a compare with a key is a length check, not a strlen (twice per rewritten node).
static constexpr std::string_view kCallMetadataKeys[] = {"stack_trace", "nn_module_stack", "source_fn_stack",
                                                         "torch_fn"};

/// Whether `metadata` holds only keys of kCallMetadataKeys, in that order:
/// then the kept subset is the map itself.
static bool onlyCallMetadata(const NodeMetadata &metadata) {
  size_t next = 0;
  for (const auto &item : metadata) {
    while (next < std::size(kCallMetadataKeys) && item.first != kCallMetadataKeys[next]) ++next;
    if (next == std::size(kCallMetadataKeys)) return false;
    ++next;
  }
  return true;
}

std::string NodeEmitter::call(const char *name, const char *overload, std::vector<NamedArgument> args,
                              TensorMeta meta, const std::string &result) {
  std::string out = result;
  if (out.empty()) {
    out = fresh_(namePrefix_ + name);
    graph.tensorValues.set(out, std::move(meta));
  }
  nodes_.push_back(makeCall(atenTarget("aten", name, overload), std::move(args), out, &origin));
  return out;
}

TensorMeta NodeEmitter::meta(const std::string &like, const std::vector<int64_t> &sizes) const {
  std::vector<SymInt> s;
  s.reserve(sizes.size());
  for (int64_t v : sizes) s.push_back(SymInt::of(v));
  return meta(like, s);
}

TensorMeta NodeEmitter::meta(const std::string &like, const std::vector<SymInt> &sizes) const {
  const TensorMeta &m = metaOf(graph, like);
  return makeMeta(m.dtype, sizes, m.device);
}

std::vector<int64_t> NodeEmitter::sizes(const std::string &value) const {
  const TensorMeta &m = metaOf(graph, value);
  if (!m.isStatic()) throw Error(dynamicMessage_, {}, "node " + origin.displayName());
  std::vector<int64_t> out;
  out.reserve(m.sizes.size());
  for (const auto &s : m.sizes) out.push_back(s.value);
  return out;
}

void copyCallMetadata(const Node &origin, Node &n) {
  // A node straight from torch.export has just these keys: one copy of the
  // map, not a lookup and an insertion per key (100k new nodes in a big graph).
  if (n.metadata.empty() && onlyCallMetadata(origin.metadata)) {
    n.metadata = origin.metadata;
    return;
  }
  for (std::string_view key : kCallMetadataKeys)
    if (const auto *item = origin.metadata.findItem(key)) n.metadata.set(item->first, item->second);
}

void moveCallMetadata(Node &origin, Node &n) {
  if (n.metadata.empty() && onlyCallMetadata(origin.metadata)) n.metadata = std::move(origin.metadata);
  else copyCallMetadata(origin, n);
}

size_t rewriteNodes(Graph &graph,
                    const std::function<std::optional<std::vector<Node>>(Graph &, Node &)> &rewrite) {
  // In place: kept nodes and single-node replacements move down over removed
  // ones; the extra nodes of longer replacements wait aside and are spliced in
  // from the back once the list has grown to its final size, which reuses the
  // list's spare capacity (decompose-rules leaves room). A second list of a
  // 100k-node graph was tens of MB of fresh memory, the pass's main cost.
  std::vector<Node> &nodes = graph.nodes;
  struct Spill {
    size_t after; // index in the compacted list of the replacement's first node
    std::vector<Node> rest;
  };
  std::vector<Spill> spills;
  size_t count = 0, kept = 0, extra = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto replacement = rewrite(graph, nodes[i]);
    if (!replacement) {
      if (kept != i) nodes[kept] = std::move(nodes[i]);
      ++kept;
      continue;
    }
    ++count;
    if (replacement->empty()) continue;
    nodes[kept] = std::move(replacement->front());
    if (replacement->size() > 1) {
      replacement->erase(replacement->begin());
      extra += replacement->size();
      spills.push_back({kept, std::move(*replacement)});
    }
    ++kept;
  }
  nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(kept), nodes.end());
  if (extra) {
    nodes.resize(kept + extra);
    size_t to = nodes.size();
    for (size_t from = kept; from-- > 0;) {
      if (!spills.empty() && spills.back().after == from) {
        std::vector<Node> &rest = spills.back().rest;
        for (size_t k = rest.size(); k-- > 0;) nodes[--to] = std::move(rest[k]);
        spills.pop_back();
      }
      if (--to != from) nodes[to] = std::move(nodes[from]);
    }
  }
  // Branches of cond (and other higher-order ops) are decomposed like the method.
  for (Node &node : nodes)
    for (auto &in : node.inputs)
      if (in.arg.kind == ArgKind::Graph && in.arg.graph()) count += rewriteNodes(*in.arg.graph(), rewrite);
  return count;
}

void replaceUses(ExportedProgram &ep, const std::string &from, const std::string &to) {
  auto fix = [&](std::string &s) {
    if (s == from) s = to;
  };
  for (Node &n : ep.graph.nodes)
    for (auto &in : n.inputs) renameNamesIn(in.arg, fix);
  for (auto &o : ep.graph.outputs) renameNamesIn(o, fix);
  for (auto &spec : ep.signature.outputSpecs) renameNamesIn(spec.arg, fix);
}

void renameValue(ExportedProgram &ep, const std::string &from, const std::string &to) {
  if (from == to) return;
  renameValues(ep, {{from, to}});
}

void renameValues(ExportedProgram &ep, const std::unordered_map<std::string, std::string> &renames) {
  if (renames.empty()) return;
  auto fix = [&](std::string &s) {
    if (auto it = renames.find(s); it != renames.end()) s = it->second;
  };
  renameNamesInMethod(ep, fix);
  Graph &g = ep.graph;
  // Keep the position of each entry so the JSON stays in definition order.
  OrderedMap<TensorMeta> renamed;
  renamed.reserve(g.tensorValues.size());
  for (auto &[k, v] : g.tensorValues) {
    auto it = renames.find(k);
    renamed.set(it == renames.end() ? k : it->second, std::move(v)); // the old map is dropped
  }
  g.tensorValues = std::move(renamed);
}

void renameUses(ExportedProgram &ep, const std::unordered_map<std::string, std::string> &renames) {
  auto fix = [&](Argument &arg) {
    auto one = [&](std::string &s) {
      if (auto it = renames.find(s); it != renames.end()) s = it->second;
    };
    if (arg.kind == ArgKind::Tensor || arg.kind == ArgKind::OptionalTensor) one(arg.name);
    if (arg.kind == ArgKind::Tensors || arg.kind == ArgKind::OptionalTensors)
      for (auto &n : arg.names) one(n);
  };
  for (Node &n : ep.graph.nodes)
    for (auto &in : n.inputs) fix(in.arg);
  for (auto &o : ep.graph.outputs) fix(o);
  for (auto &spec : ep.signature.outputSpecs) fix(spec.arg);
  OrderedMap<TensorMeta> kept;
  kept.reserve(ep.graph.tensorValues.size());
  for (auto &[name, meta] : ep.graph.tensorValues)
    if (!renames.count(name)) kept.set(name, std::move(meta));
  ep.graph.tensorValues = std::move(kept);
}

const TensorMeta *firstTensorInputMeta(const Graph &graph, const Node &node) {
  std::vector<std::string> names;
  for (const auto &in : node.inputs) {
    names.clear();
    in.arg.collectTensorNames(names);
    for (const auto &name : names)
      if (const TensorMeta *meta = graph.tensorValues.find(name)) return meta;
  }
  return nullptr;
}

std::string userFrame(const Node &node) {
  const SharedString *found = node.metadata.find("stack_trace");
  if (!found || found->empty()) return "";
  std::string_view trace = found->view();
  auto pos = trace.rfind("File \"");
  std::string frame(pos == std::string_view::npos ? trace : trace.substr(pos));
  for (char &c : frame)
    if (c == '\n') c = ' ';
  // Collapse runs of spaces from the code indentation.
  std::string out;
  for (char c : frame)
    if (!(c == ' ' && !out.empty() && out.back() == ' ')) out += c;
  return out;
}

std::optional<std::vector<int64_t>> concreteInts(const Argument &arg) {
  if (arg.kind == ArgKind::Ints) return arg.ints.toVector();
  if (arg.kind == ArgKind::Int) return std::vector<int64_t>{arg.intValue};
  if (arg.kind == ArgKind::SymInts) {
    std::vector<int64_t> out;
    for (const auto &s : arg.syms) {
      if (s.isName) return std::nullopt;
      out.push_back(s.intValue);
    }
    return out;
  }
  return std::nullopt;
}

std::vector<SymInt> sizesOf(const Graph &graph, const std::string &name) { return metaOf(graph, name).sizes; }

TargetCensus::TargetCensus(const Program &program) {
  for (const auto &[name, method] : program.methods) add(method.program.graph);
}

void TargetCensus::add(const Graph &graph) {
  // The last two targets seen (entry indices): runs of one op and chains
  // alternating two (addmm, relu, addmm, ...) skip the hash.
  size_t last = SIZE_MAX, before = SIZE_MAX;
  for (const Node &node : graph.nodes) {
    size_t entry;
    if (last != SIZE_MAX && entries_[last].target == node.target) {
      entry = last;
    } else if (before != SIZE_MAX && entries_[before].target == node.target) {
      entry = before;
    } else {
      auto [slot, unseen] = seen_.try_emplace(node.target, entries_.size());
      if (unseen) entries_.push_back({node.target, parseTarget(node.target)});
      entry = slot->second;
    }
    if (entry != last) {
      before = last;
      last = entry;
    }
    // Only higher-order ops (cond, map, ...) take graphs: the operands of an
    // ATen or Edge op are not looked at (one cache miss less per node).
    const OpTarget &t = entries_[entry].parsed;
    if ((t.dialect == TargetDialect::Aten || t.dialect == TargetDialect::Edge) && t.ns != "higher_order") continue;
    for (const auto &in : node.inputs)
      if (in.arg.kind == ArgKind::Graph && in.arg.graph()) add(*in.arg.graph());
  }
}

bool PassTrigger::anyIn(const TargetCensus &census) const {
  if (kind == Kind::Always) return true;
  for (const auto &entry : census.entries()) {
    const OpTarget &t = entry.parsed;
    if (kind == Kind::Matching) {
      if (matches(entry.target, t)) return true;
      continue;
    }
    if ((t.dialect != TargetDialect::Aten && t.dialect != TargetDialect::Edge) || t.ns != "aten") continue;
    for (std::string_view rest = ops; !rest.empty();) {
      size_t space = rest.find(' ');
      std::string_view word = rest.substr(0, space);
      if (word == t.name) return true;
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
  }
  return false;
}

} // namespace exir::edge
