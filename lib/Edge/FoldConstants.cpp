//===- Edge/FoldConstants.cpp - shape ops on constants -> constant views -===//
//
// linear lowers to permute_copy(W) + mm, so without folding every inference
// transposes each weight into the arena. As upstream's constant_prop_pass does
// (after to_edge), a node whose only tensor operand is a constant (a
// parameter, a buffer no output mutates, a lifted tensor constant, or the
// result of an earlier fold) is evaluated once here and replaced by a new
// lifted constant named after its source (`linear.weight_prop`, placeholder
// `c_linear_weight_prop`), and a constant left without users leaves the
// signature and the constant table.
//
// Only shape ops fold (permute_copy, t_copy, transpose_copy, view_copy,
// unsqueeze_copy, squeeze_copy, expand_copy, slice_copy, select_copy,
// alias_copy), and they need no kernel: their result is a view of the same
// storage, so the folded constant is the same DataRef with other sizes,
// strides and storage offset (schema/artifact.md: a constant is as_strided
// over its bytes). No bytes are computed or written here, `-o -` works as
// any output does, and exir-emit (or exir-run) lays a non-dense view out
// densely when it streams the constant. Quantization primitives
// (dequantize_*) and ops that compute new values are left to run time, as
// upstream's default skip list leaves dequantize.
//
// Modes (exir-edge --fold-constants): `auto` (the default) folds only what
// does not grow the emitted constants: a view with the same bytes as its
// source (a reshape of a contiguous weight), or a view whose source has no
// other user and shares its storage with no other live constant (a weight
// transposed for its one linear), and which is not larger than that source
// (an expand is); `always` folds every foldable node; `never` none.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "IR/ValueNames.h"
#include "Support/Error.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace exir::edge {

namespace {

/// Contiguous strides (elements) for static sizes.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return strides;
}

bool isContiguous(const ConstantTensor &c) {
  std::vector<int64_t> dense = contiguousStrides(c.sizes);
  for (size_t d = 0; d < c.sizes.size(); ++d)
    if (c.sizes[d] != 1 && c.strides[d] != dense[d]) return false;
  return true;
}

/// The layout the emitter gives a constant with these strides (as
/// TensorMeta::dimOrder and emit::emittedDimOrder): channels-last when the
/// strides say so at rank 4-5, else contiguous. A fold must not change it.
bool channelsLastStrides(const std::vector<int64_t> &strides) {
  size_t rank = strides.size();
  if (rank < 4 || rank > 5) return false;
  std::vector<size_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] > strides[b]; });
  if (order[0] != 0 || order.back() != 1) return false;
  for (size_t i = 1; i + 1 < rank; ++i)
    if (order[i] != i + 1) return false;
  return true;
}

int64_t wrapDim(int64_t dim, size_t rank) { return dim < 0 ? dim + int64_t(rank) : dim; }

std::optional<int64_t> intArg(const Node &node, const char *name, std::optional<int64_t> fallback = std::nullopt) {
  const Argument *a = findArg(node, name);
  if (!a || a->kind == ArgKind::None) return fallback;
  if (a->kind == ArgKind::Int) return a->intValue;
  if (a->kind == ArgKind::SymInt && a->syms.size() == 1 && !a->syms[0].isName) return a->syms[0].intValue;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> intsArg(const Node &node, const char *name) {
  const Argument *a = findArg(node, name);
  return a ? concreteInts(*a) : std::nullopt;
}

/// The view a shape op makes of constant `in`, or nullopt when the op is not
/// one of the folded ones or its arguments are not static.
std::optional<ConstantTensor> viewOf(const Node &node, const ConstantTensor &in) {
  OpTarget t = targetOf(node);
  if (t.ns != "aten") return std::nullopt;
  ConstantTensor out = in;
  const size_t rank = in.sizes.size();
  auto validDim = [&](int64_t d, size_t r) { return d >= 0 && d < int64_t(r); };
  if ((t.name == "alias_copy" && t.overload == "default") || (t.name == "t_copy" && rank < 2)) return out;
  if (t.name == "t_copy" && t.overload == "default") {
    if (rank != 2) return std::nullopt;
    std::swap(out.sizes[0], out.sizes[1]);
    std::swap(out.strides[0], out.strides[1]);
    return out;
  }
  if (t.name == "transpose_copy" && t.overload == "int") {
    auto d0 = intArg(node, "dim0"), d1 = intArg(node, "dim1");
    if (!d0 || !d1 || rank == 0) return rank == 0 ? std::optional(out) : std::nullopt;
    int64_t a = wrapDim(*d0, rank), b = wrapDim(*d1, rank);
    if (!validDim(a, rank) || !validDim(b, rank)) return std::nullopt;
    std::swap(out.sizes[size_t(a)], out.sizes[size_t(b)]);
    std::swap(out.strides[size_t(a)], out.strides[size_t(b)]);
    return out;
  }
  if (t.name == "permute_copy" && t.overload == "default") {
    auto dims = intsArg(node, "dims");
    if (!dims || dims->size() != rank) return std::nullopt;
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < rank; ++i) {
      int64_t d = wrapDim((*dims)[i], rank);
      if (!validDim(d, rank) || seen[size_t(d)]) return std::nullopt;
      seen[size_t(d)] = true;
      out.sizes[i] = in.sizes[size_t(d)];
      out.strides[i] = in.strides[size_t(d)];
    }
    return out;
  }
  if (t.name == "view_copy" && t.overload == "default") {
    // A reshape is a view only of a contiguous tensor (the general stride
    // rules are not worth it: weights are contiguous).
    auto size = intsArg(node, "size");
    if (!size || !isContiguous(in)) return std::nullopt;
    auto numel = in.numel();
    if (!numel) return std::nullopt;
    std::vector<int64_t> sizes = *size;
    int64_t known = 1, inferred = -1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == -1 && inferred < 0) inferred = int64_t(i);
      else if (sizes[i] < 0) return std::nullopt;
      else known *= sizes[i];
    }
    if (inferred >= 0) {
      if (known == 0 || int64_t(*numel) % known) return std::nullopt;
      sizes[size_t(inferred)] = int64_t(*numel) / known;
    } else if (uint64_t(known) != *numel) {
      return std::nullopt;
    }
    out.sizes = sizes;
    out.strides = contiguousStrides(sizes);
    return out;
  }
  if (t.name == "unsqueeze_copy" && t.overload == "default") {
    auto dim = intArg(node, "dim");
    if (!dim) return std::nullopt;
    int64_t d = *dim < 0 ? *dim + int64_t(rank) + 1 : *dim;
    if (d < 0 || d > int64_t(rank)) return std::nullopt;
    int64_t stride = size_t(d) < rank ? in.sizes[size_t(d)] * in.strides[size_t(d)] : 1;
    out.sizes.insert(out.sizes.begin() + d, 1);
    out.strides.insert(out.strides.begin() + d, stride);
    return out;
  }
  if (t.name == "squeeze_copy") {
    std::vector<bool> drop(rank, false);
    if (t.overload == "default") {
      for (size_t d = 0; d < rank; ++d) drop[d] = in.sizes[d] == 1;
    } else if (t.overload == "dim" || t.overload == "dims") {
      std::vector<int64_t> dims;
      if (t.overload == "dim") {
        auto d = intArg(node, "dim");
        if (!d) return std::nullopt;
        dims.push_back(*d);
      } else {
        auto ds = intsArg(node, "dim");
        if (!ds) return std::nullopt;
        dims = *ds;
      }
      for (int64_t d : dims) {
        if (rank == 0) continue;
        int64_t w = wrapDim(d, rank);
        if (!validDim(w, rank)) return std::nullopt;
        drop[size_t(w)] = in.sizes[size_t(w)] == 1;
      }
    } else {
      return std::nullopt;
    }
    out.sizes.clear();
    out.strides.clear();
    for (size_t d = 0; d < rank; ++d)
      if (!drop[d]) {
        out.sizes.push_back(in.sizes[d]);
        out.strides.push_back(in.strides[d]);
      }
    return out;
  }
  if (t.name == "expand_copy" && t.overload == "default") {
    auto size = intsArg(node, "size");
    if (!size || size->size() < rank) return std::nullopt;
    size_t lead = size->size() - rank;
    out.sizes.assign(size->size(), 0);
    out.strides.assign(size->size(), 0);
    for (size_t i = 0; i < size->size(); ++i) {
      int64_t want = (*size)[i];
      if (i < lead) {
        if (want < 0) return std::nullopt;
        out.sizes[i] = want; // new leading dims broadcast: stride 0
        continue;
      }
      int64_t have = in.sizes[i - lead];
      if (want == -1 || want == have) {
        out.sizes[i] = have;
        out.strides[i] = in.strides[i - lead];
      } else if (have == 1 && want >= 0) {
        out.sizes[i] = want;
      } else {
        return std::nullopt;
      }
    }
    return out;
  }
  if (t.name == "slice_copy" && t.overload == "Tensor") {
    auto dim = intArg(node, "dim", 0), step = intArg(node, "step", 1);
    if (!dim || !step || *step <= 0 || rank == 0) return std::nullopt;
    int64_t d = wrapDim(*dim, rank);
    if (!validDim(d, rank)) return std::nullopt;
    int64_t size = in.sizes[size_t(d)];
    // torch's clamping: negative bounds count from the end; both end up in [0, size].
    auto bound = [&](const char *name, int64_t fallback, bool &ok) {
      const Argument *a = findArg(node, name);
      int64_t x = fallback;
      if (a && a->kind != ArgKind::None) {
        auto v = intArg(node, name);
        ok &= v.has_value(); // symbolic bounds do not fold
        x = v.value_or(fallback);
        if (x < 0) x += size;
      }
      return std::clamp<int64_t>(x, 0, size);
    };
    bool ok = true;
    int64_t s = bound("start", 0, ok);
    int64_t e = std::max(bound("end", size, ok), s);
    if (!ok) return std::nullopt;
    out.storageOffset += s * in.strides[size_t(d)];
    out.sizes[size_t(d)] = (e - s + *step - 1) / *step;
    out.strides[size_t(d)] = in.strides[size_t(d)] * *step;
    return out;
  }
  if (t.name == "select_copy" && t.overload == "int") {
    auto dim = intArg(node, "dim"), index = intArg(node, "index");
    if (!dim || !index || rank == 0) return std::nullopt;
    int64_t d = wrapDim(*dim, rank);
    if (!validDim(d, rank)) return std::nullopt;
    int64_t i = *index < 0 ? *index + in.sizes[size_t(d)] : *index;
    if (i < 0 || i >= in.sizes[size_t(d)]) return std::nullopt;
    out.storageOffset += i * in.strides[size_t(d)];
    out.sizes.erase(out.sizes.begin() + d);
    out.strides.erase(out.strides.begin() + d);
    return out;
  }
  return std::nullopt;
}

/// Identifies the bytes a constant reads: its data reference.
std::string storageKey(const std::string &fqn, const ConstantTensor &c) {
  if (c.data.inlineBytes || c.data.file.empty()) return "inline:" + fqn;
  return c.data.file + ":" + std::to_string(c.data.offset) + ":" + std::to_string(c.data.length);
}

std::optional<uint64_t> denseBytes(const ConstantTensor &c) {
  auto n = c.numel();
  if (!n) return std::nullopt;
  return *n * elementSize(c.dtype);
}

/// The node's output value name when it has exactly one tensor output.
const std::string *singleTensorOutput(const Node &node) {
  if (node.outputs.size() != 1 || node.outputs[0].kind != ArgKind::Tensor) return nullptr;
  return &node.outputs[0].name;
}

/// A constant as the folds see it: the table entry with strides filled in.
ConstantTensor withStrides(ConstantTensor c) {
  if (c.strides.size() != c.sizes.size()) c.strides = contiguousStrides(c.sizes);
  return c;
}

struct MethodState {
  ExportedProgram *ep;
  std::unordered_map<std::string, std::string> constantOf;   // value name -> FQN of its constant
  std::unordered_map<std::string, size_t> uses;               // value name -> uses (nodes, outputs)
};

} // namespace

void foldConstantsWith(Program &program, FoldConstantsMode mode) {
  if (mode == FoldConstantsMode::Never) return;
  // A fold's result reads its source's storage: it inherits the source's key.
  std::unordered_map<std::string, std::string> storageOf;
  auto keyOf = [&](const std::string &fqn) -> const std::string & {
    auto it = storageOf.find(fqn);
    if (it == storageOf.end()) it = storageOf.emplace(fqn, storageKey(fqn, *program.constants.find(fqn))).first;
    return it->second;
  };
  std::unordered_set<std::string> droppedConstants; // erased in one sweep (OrderedMap::erase is linear per call)
  std::vector<MethodState> methods;
  // Live constant values (method placeholders with a use) per storage: a
  // view that needs its own bytes grows the file while another value keeps
  // the source's bytes alive.
  std::unordered_map<std::string, size_t> storageRefs;
  // A buffer one method mutates is state in every method (--share-mutable-buffers).
  std::unordered_set<std::string> mutated;
  for (auto &[name, method] : program.methods)
    for (const auto &out : method.program.signature.outputSpecs)
      if (out.kind == OutputKind::BufferMutation || out.kind == OutputKind::ParameterMutation) mutated.insert(out.target);
  for (auto &[name, method] : program.methods) {
    MethodState st{&method.program, {}, {}};
    ExportedProgram &ep = method.program;
    for (const auto &spec : ep.signature.inputSpecs) {
      bool lifted = spec.kind == InputKind::Parameter || spec.kind == InputKind::Buffer ||
                    spec.kind == InputKind::TensorConstant;
      if (!lifted || spec.arg.kind != ArgKind::Tensor || mutated.count(spec.target)) continue;
      const ConstantTensor *c = program.constants.find(spec.target);
      bool hasData = c && (c->data.inlineBytes || !c->data.file.empty());
      if (!hasData || (c->sizes.size() != c->strides.size() && !c->strides.empty())) continue; // nothing to fold
      st.constantOf[spec.arg.name] = spec.target;
    }
    st.uses.reserve(ep.graph.tensorValues.size());
    auto use = [&](const std::string &n) { ++st.uses[n]; };
    for (const Node &node : ep.graph.nodes)
      for (const auto &in : node.inputs) forEachTensorName(in.arg, use);
    for (const auto &out : ep.graph.outputs) forEachTensorName(out, use);
    for (const auto &[value, fqn] : st.constantOf)
      if (st.uses.count(value)) ++storageRefs[keyOf(fqn)];
    methods.push_back(std::move(st));
  }

  // A folded constant is named after the constant it is computed from, as
  // upstream's constant_prop_pass does with register_like_source (for
  // external weights): `linear.weight_prop`, so --external-constants globs
  // and readers still see where it came from. Its placeholder is "c_" and
  // the FQN with '_' for '.', as torch.export names a lifted constant's.
  std::unordered_map<std::string, std::string> rootOf; // folded FQN -> source FQN
  std::unordered_map<std::string, int> nextSuffix;
  std::unordered_set<std::string> newValues; // placeholders named so far ("a.b" and "a_b" meet as "a_b")
  auto freshFqn = [&](const Graph &graph, const std::string &source) {
    auto r = rootOf.find(source);
    std::string base = (r == rootOf.end() ? source : r->second) + "_prop";
    for (int &k = nextSuffix[base];; ++k) {
      std::string fqn = k == 0 ? base : base + "_" + std::to_string(k);
      std::string value = "c_" + fqn; // torch.export's placeholder for a lifted tensor constant
      std::replace(value.begin(), value.end(), '.', '_');
      if (!program.constants.contains(fqn) && !graph.tensorValues.contains(value) && newValues.insert(value).second) {
        ++k;
        rootOf[fqn] = base.substr(0, base.size() - 5);
        return std::make_pair(fqn, value);
      }
    }
  };

  for (MethodState &st : methods) {
    ExportedProgram &ep = *st.ep;
    Graph &graph = ep.graph;
    std::unordered_set<std::string> graphOutputs;
    {
      std::vector<std::string> names;
      for (const auto &out : graph.outputs) out.collectTensorNames(names);
      graphOutputs.insert(names.begin(), names.end());
    }
    // A folded node's output value becomes the placeholder of its constant,
    // named after the FQN as upstream names it: one rename sweep at the end.
    std::unordered_map<std::string, std::string> renames; // node output -> placeholder
    struct Added {
      std::string value, fqn, placeholder; // node output, its constant, the constant's placeholder
    };
    std::vector<Added> added;
    std::unordered_set<std::string> dead; // placeholders folding left without users
    // Kept nodes move down over folded ones in place (no second node array).
    size_t keptNodes = 0;
    static const std::string kNoOperand;
    for (size_t k = 0; k < graph.nodes.size(); ++k) {
      Node &node = graph.nodes[k];
      const std::string *out = singleTensorOutput(node);
      // Exactly one tensor operand, a constant (or the result of an earlier fold).
      // Names point into the node, which stays where it is when it folds.
      const std::string *first = nullptr;
      size_t operands = 0;
      auto count = [&](const std::string &n) {
        if (operands++ == 0) first = &n;
      };
      for (const auto &in : node.inputs) forEachTensorName(in.arg, count);
      const std::string &operand = operands == 1 ? *first : kNoOperand;
      auto src = operand.empty() ? st.constantOf.end() : st.constantOf.find(operand);
      // Cheap checks first: most nodes are not on a constant.
      const TensorMeta *outMeta = out && src != st.constantOf.end() ? graph.tensorValues.find(*out) : nullptr;
      std::optional<ConstantTensor> view;
      if (outMeta && outMeta->isStatic() && !graphOutputs.count(*out) &&
          parseTarget(node.target).dialect == TargetDialect::Edge) {
        // The table entry itself unless its strides need filling in (no copy).
        const ConstantTensor *entry = program.constants.find(src->second);
        std::optional<ConstantTensor> filled;
        if (entry->strides.size() != entry->sizes.size()) filled = withStrides(*entry);
        const ConstantTensor &in = filled ? *filled : *entry;
        view = viewOf(node, in);
        if (view) {
          // The result must be what the graph says: dtype, shape, and the
          // layout the emitter picks from the strides.
          std::vector<int64_t> sizes;
          for (const auto &s : outMeta->sizes) sizes.push_back(s.value);
          std::vector<int64_t> outStrides;
          for (const auto &s : outMeta->strides) outStrides.push_back(s.value);
          if (view->dtype != outMeta->dtype || view->sizes != sizes ||
              channelsLastStrides(view->strides) != channelsLastStrides(outStrides) || !view->storageBytesNeeded())
            view.reset();
        }
        if (view && mode == FoldConstantsMode::Auto) {
          const std::string &key = keyOf(src->second);
          bool sameBytes = isContiguous(in) && isContiguous(*view) && in.storageOffset == view->storageOffset &&
                           denseBytes(in) == denseBytes(*view);
          bool sourceDies = st.uses[operand] == 1 && storageRefs[key] == 1;
          auto inBytes = denseBytes(in), outBytes = denseBytes(*view);
          if (!sameBytes && !(sourceDies && inBytes && outBytes && *outBytes <= *inBytes)) view.reset();
        }
      }
      if (!view) {
        if (keptNodes != k) graph.nodes[keptNodes] = std::move(node);
        ++keptNodes;
        continue;
      }
      auto [fqn, value] = freshFqn(graph, src->second);
      std::string key = keyOf(src->second);
      storageOf[fqn] = key;
      program.constants.set(fqn, std::move(*view));
      st.constantOf[*out] = fqn;
      renames.emplace(*out, value);
      // The view keeps the storage alive in place of its source when that dies.
      if (--st.uses[operand] == 0) {
        dead.insert(operand);
      } else {
        ++storageRefs[key];
      }
      added.push_back({*out, std::move(fqn), std::move(value)});
    }
    graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(keptNodes), graph.nodes.end());
    if (added.empty()) continue;
    // New placeholders go after the existing constants, before the user inputs
    // (torch's order: parameters, buffers, constants, user inputs); dead ones
    // leave. Both lists are compacted in place and the new entries inserted at
    // that boundary: a fold that kills its source leaves the size unchanged, so
    // nothing is reallocated.
    std::vector<InputSpec> &specs = ep.signature.inputSpecs;
    std::vector<Argument> &inputs = graph.inputs;
    size_t n = specs.size(), boundary = 0;
    while (boundary < n && specs[boundary].kind != InputKind::UserInput &&
           specs[boundary].kind != InputKind::ConstantInput && specs[boundary].kind != InputKind::Token)
      ++boundary;
    size_t keptSpecs = 0, insertAt = 0;
    for (size_t k = 0; k < n; ++k) {
      if (k == boundary) insertAt = keptSpecs;
      if (specs[k].arg.kind == ArgKind::Tensor && dead.count(specs[k].arg.name)) continue;
      if (keptSpecs != k) {
        specs[keptSpecs] = std::move(specs[k]);
        inputs[keptSpecs] = std::move(inputs[k]);
      }
      ++keptSpecs;
    }
    if (boundary == n) insertAt = keptSpecs;
    specs.erase(specs.begin() + static_cast<std::ptrdiff_t>(keptSpecs), specs.end());
    inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(keptSpecs), inputs.end());
    std::vector<InputSpec> newSpecs;
    std::vector<Argument> newInputs;
    for (const Added &a : added) {
      if (dead.count(a.value)) continue; // folded again further on
      InputSpec spec;
      spec.kind = InputKind::TensorConstant;
      spec.arg = Argument::tensor(a.placeholder);
      spec.target = a.fqn;
      newSpecs.push_back(std::move(spec));
      newInputs.push_back(Argument::tensor(a.placeholder));
    }
    specs.insert(specs.begin() + static_cast<std::ptrdiff_t>(insertAt), std::make_move_iterator(newSpecs.begin()),
                 std::make_move_iterator(newSpecs.end()));
    inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(insertAt), std::make_move_iterator(newInputs.begin()),
                  std::make_move_iterator(newInputs.end()));
    // Dead placeholders and folded-through intermediates lose their metadata;
    // intermediates are not constants either.
    for (const Added &a : added)
      if (dead.count(a.value)) droppedConstants.insert(a.fqn);
    // One sweep over the value table: dead values leave, folded ones take the
    // placeholder's name in place (OrderedMap::erase is linear per call).
    graph.tensorValues.rewrite([&](std::string &name, TensorMeta &) {
      if (dead.count(name)) return false;
      if (auto r = renames.find(name); r != renames.end()) name = r->second;
      return true;
    });
    auto rename = [&](std::string &name) {
      if (auto r = renames.find(name); r != renames.end()) name = r->second;
    };
    for (Node &node : graph.nodes)
      for (auto &in : node.inputs) {
        Argument &a = in.arg;
        if (a.kind == ArgKind::Tensor || a.kind == ArgKind::OptionalTensor) rename(a.name);
        else if (a.kind == ArgKind::Tensors || a.kind == ArgKind::OptionalTensors)
          for (auto &n : a.names) rename(n);
      }
  }

  // Constants no method refers to any more leave the table (only ones this
  // pass orphaned: a table entry nothing used before stays as it was).
  std::unordered_set<std::string> referenced;
  for (auto &[name, method] : program.methods)
    for (const auto &spec : method.program.signature.inputSpecs) referenced.insert(spec.target);
  for (const MethodState &st : methods)
    for (const auto &[value, fqn] : st.constantOf)
      if (!referenced.count(fqn)) droppedConstants.insert(fqn);
  if (droppedConstants.empty()) return;
  program.constants.rewrite([&](std::string &fqn, ConstantTensor &) { return !droppedConstants.count(fqn); });
}

void foldConstants(Program &program) { foldConstantsWith(program, FoldConstantsMode::Auto); }

} // namespace exir::edge
