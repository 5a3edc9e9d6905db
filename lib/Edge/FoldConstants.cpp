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
#include <deque>
#include <string_view>
#include <iterator>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <tuple>

namespace exir::edge {

namespace {

/// Contiguous strides (elements) for static sizes.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return strides;
}

bool isContiguous(const ConstantTensor &c) {
  int64_t dense = 1; // contiguousStrides(c.sizes)[d], without building it
  for (size_t d = c.sizes.size(); d-- > 0;) {
    if (c.sizes[d] != 1 && c.strides[d] != dense) return false;
    dense *= std::max<int64_t>(c.sizes[d], 1);
  }
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

/// The view a shape op (target `t`, parsed once per distinct target) makes of
/// constant `in`, or nullopt when the op is not one of the folded ones or its
/// arguments are not static. The view's data reference is left empty: the
/// caller copies it only for a view it keeps.
std::optional<ConstantTensor> viewOf(const Node &node, const OpTarget &t, const ConstantTensor &in) {
  if (t.ns != "aten") return std::nullopt;
  ConstantTensor out;
  out.dtype = in.dtype;
  out.sizes = in.sizes;
  out.strides = in.strides;
  out.storageOffset = in.storageOffset;
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

constexpr uint32_t kNone = UINT32_MAX;

/// Open addressing from a key to a dense id (0, 1, ...), one slot of 8 bytes
/// (hash tag, id + 1) per entry: a 100k-node graph looks up every use once,
/// and a node-based map cost an allocation per key and a cache miss per probe.
template <typename Key, typename Hash> class IdTable {
public:
  /// The key's id, or kNone.
  uint32_t find(const Key &key) const { return findHashed(key, Hash{}(key)); }
  /// The key's id, adding it (with the next id) when it is new.
  std::pair<uint32_t, bool> insert(const Key &key) {
    size_t hash = Hash{}(key);
    if (uint32_t id = findHashed(key, hash); id != kNone) return {id, false};
    if (2 * (keys_.size() + 1) > slots_.size()) grow();
    keys_.push_back(key);
    hashes_.push_back(hash);
    place(uint32_t(keys_.size() - 1), hash);
    return {uint32_t(keys_.size() - 1), true};
  }
  void reserve(size_t n) {
    keys_.reserve(n);
    hashes_.reserve(n);
    if (slots_.size() < 2 * n) rehash(2 * n);
  }
  size_t size() const { return keys_.size(); }

private:
  static uint64_t tagOf(size_t hash) { return uint64_t(hash >> 32 ^ hash) << 32; }
  uint32_t findHashed(const Key &key, size_t hash) const {
    if (slots_.empty()) return kNone;
    size_t mask = slots_.size() - 1;
    uint64_t tag = tagOf(hash);
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      uint64_t slot = slots_[i];
      if (slot == 0) return kNone;
      uint32_t id = uint32_t(slot) - 1;
      if ((slot & ~uint64_t(0xffffffff)) == tag && keys_[id] == key) return id;
    }
  }
  void place(uint32_t id, size_t hash) {
    size_t mask = slots_.size() - 1;
    size_t i = hash & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = tagOf(hash) | (uint64_t(id) + 1);
  }
  void grow() { rehash(std::max<size_t>(64, 2 * slots_.size())); }
  void rehash(size_t minSlots) {
    size_t n = 64;
    while (n < minSlots) n *= 2;
    slots_.assign(n, 0);
    for (uint32_t id = 0; id < keys_.size(); ++id) place(id, hashes_[id]);
  }

  std::vector<uint64_t> slots_;
  std::vector<Key> keys_;
  std::vector<size_t> hashes_;
};

/// The bytes a constant reads: its file range, or the constant itself when
/// its bytes are inline (`inline` is then the constant's position).
struct StorageKey {
  uint32_t file = kNone; // id of the file name; kNone for inline bytes
  uint64_t offset = 0, length = 0;
  bool operator==(const StorageKey &o) const = default;
};
struct StorageKeyHash {
  size_t operator()(const StorageKey &k) const {
    uint64_t h = k.offset * 0x9E3779B97F4A7C15ull ^ (k.length + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full ^ k.file;
    return size_t(h ^ h >> 29);
  }
};
struct NameHash { // word at a time (IR/StringHash.h), not std::hash's byte loop
  size_t operator()(std::string_view s) const noexcept { return size_t(hashString(s)); }
};
using NameTable = IdTable<std::string_view, NameHash>;

/// What the pass knows of a value that can be or become a constant: a lifted
/// constant's placeholder, or the output of a node whose one tensor operand is
/// such a value (a fold candidate). Every other value has no id.
struct ValueState {
  uint32_t uses = 0;             // node inputs and graph outputs
  uint32_t constant = kNone;     // position in program.constants once it is one
  uint32_t added = kNone;        // index in the method's `added` once folded
  uint32_t spec = kNone;         // its input spec, for a lifted constant
  bool graphOutput = false;
  bool dead = false;             // a constant placeholder folding left without users
};

struct MethodState {
  ExportedProgram *ep;
  NameTable names;               // ids of the values above, keys pointing into the graph
  std::vector<ValueState> values;
  std::vector<uint32_t> uses;    // every tensor use in node order (forEachTensorName), its id or kNone
  std::vector<uint32_t> candidates; // per fold candidate node in order: its output's id
};

/// forEachTensorName with write access and whether the original rename sweep
/// reached the name (it rewrote tensors and tensor lists, not nested lists).
template <typename F> void forEachTensorNameMut(Argument &arg, bool renamable, F &&f) {
  switch (arg.kind) {
  case ArgKind::Tensor: f(arg.name, renamable); break;
  case ArgKind::OptionalTensor:
    if (!arg.name.empty()) f(arg.name, renamable);
    break;
  case ArgKind::Tensors:
  case ArgKind::OptionalTensors:
    for (auto &n : arg.names)
      if (!n.empty()) f(n, renamable);
    break;
  case ArgKind::NestedTensors:
    for (auto &l : arg.mutableNestedTensors())
      for (auto &n : l) f(n, false);
    break;
  case ArgKind::StringToArgument:
    for (auto &[k, v] : arg.mutableMapping()) forEachTensorNameMut(v, false, f);
    break;
  default: break;
  }
}

} // namespace

void foldConstantsWith(Program &program, FoldConstantsMode mode) {
  if (mode == FoldConstantsMode::Never) return;
  // Per constant (its position in program.constants, or past those its place
  // in `pending`, the folds' constants): the storage it reads, how many input specs of any method
  // name it, whether a method treated it as foldable, and for a folded one
  // the constant its name derives from.
  std::vector<uint32_t> storageOf, refs, rootOf;
  std::vector<uint8_t> tracked;
  std::vector<int> nextSuffix; // per root: the next `_prop` suffix to try
  auto grow = [&](size_t n) {
    if (storageOf.size() >= n) return;
    storageOf.resize(n, kNone);
    refs.resize(n, 0);
    rootOf.resize(n, kNone);
    tracked.resize(n, 0);
    nextSuffix.resize(n, 0);
  };
  // The folds' constants join the table only after the dead ones left it: the
  // table then does not grow (a fold that kills its source replaces it), so
  // its items are neither moved nor rehashed. A deque keeps the keys (which
  // pendingNames points into) in place.
  const size_t tableSize = program.constants.size();
  std::deque<std::pair<std::string, ConstantTensor>> pending;
  NameTable pendingNames;
  grow(tableSize);
  auto entryAt = [&](uint32_t pos) -> std::pair<std::string, ConstantTensor> & {
    return pos < tableSize ? *(program.constants.begin() + std::ptrdiff_t(pos)) : pending[pos - tableSize];
  };
  // A fold's result reads its source's storage: it inherits the source's id.
  NameTable files;
  IdTable<StorageKey, StorageKeyHash> storages;
  auto storageId = [&](uint32_t pos) {
    if (storageOf[pos] != kNone) return storageOf[pos];
    const DataRef &d = entryAt(pos).second.data;
    StorageKey key;
    if (d.inlineBytes || d.file.empty()) key.offset = pos; // its own storage
    else key = {files.insert(d.file).first, d.offset, d.length};
    return storageOf[pos] = storages.insert(key).first;
  };
  std::vector<uint32_t> storageRefs; // by storage id; see below
  // A buffer one method mutates is state in every method (--share-mutable-buffers).
  std::unordered_set<std::string> mutated;
  for (auto &[name, method] : program.methods)
    for (const auto &out : method.program.signature.outputSpecs)
      if (out.kind == OutputKind::BufferMutation || out.kind == OutputKind::ParameterMutation) mutated.insert(out.target);
  std::vector<MethodState> methods;
  for (auto &[name, method] : program.methods) {
    MethodState st{&method.program, {}, {}, {}, {}};
    ExportedProgram &ep = method.program;
    const std::vector<InputSpec> &specs = ep.signature.inputSpecs;
    st.names.reserve(specs.size());
    size_t constantHint = 0;
    for (size_t k = 0; k < specs.size(); ++k) {
      const InputSpec &spec = specs[k];
      size_t pos = spec.target.empty() ? kNoPosition : positionFrom(program.constants, spec.target, constantHint);
      if (pos == kNoPosition) continue;
      ++refs[pos]; // any spec keeps its constant in the table
      bool lifted = spec.kind == InputKind::Parameter || spec.kind == InputKind::Buffer ||
                    spec.kind == InputKind::TensorConstant;
      if (!lifted || spec.arg.kind != ArgKind::Tensor || mutated.count(spec.target)) continue;
      const ConstantTensor &c = entryAt(uint32_t(pos)).second;
      bool hasData = c.data.inlineBytes || !c.data.file.empty();
      if (!hasData || (c.sizes.size() != c.strides.size() && !c.strides.empty())) continue; // nothing to fold
      auto [id, fresh] = st.names.insert(spec.arg.name);
      if (fresh) st.values.emplace_back();
      st.values[id].constant = uint32_t(pos);
      st.values[id].spec = uint32_t(k);
      tracked[pos] = 1;
    }
    // Uses of those values, and of the outputs of nodes that may fold (one
    // tensor operand that is or may become a constant): each use looked up once.
    const Graph &graph = ep.graph;
    for (const Node &node : graph.nodes) {
      size_t first = st.uses.size();
      for (const auto &in : node.inputs)
        forEachTensorName(in.arg, [&](const std::string &n) {
          uint32_t id = st.names.find(n);
          if (id != kNone) ++st.values[id].uses;
          st.uses.push_back(id);
        });
      const std::string *out = singleTensorOutput(node);
      if (st.uses.size() == first + 1 && st.uses[first] != kNone && out) {
        auto [id, fresh] = st.names.insert(*out);
        if (fresh) st.values.emplace_back();
        st.candidates.push_back(id);
      }
    }
    for (const auto &out : graph.outputs)
      forEachTensorName(out, [&](const std::string &n) {
        if (uint32_t id = st.names.find(n); id != kNone) {
          ++st.values[id].uses;
          st.values[id].graphOutput = true;
        }
      });
    for (const ValueState &v : st.values)
      if (v.constant != kNone && v.uses) {
        uint32_t s = storageId(v.constant);
        if (storageRefs.size() <= s) storageRefs.resize(s + 1, 0);
        ++storageRefs[s];
      }
    methods.push_back(std::move(st));
  }
  // Live constant values (method placeholders with a use) per storage: a
  // view that needs its own bytes grows the file while another value keeps
  // the source's bytes alive.
  auto storageRef = [&](uint32_t s) -> uint32_t & {
    if (storageRefs.size() <= s) storageRefs.resize(s + 1, 0);
    return storageRefs[s];
  };

  // A folded constant is named after the constant it is computed from, as
  // upstream's constant_prop_pass does with register_like_source (for
  // external weights): `linear.weight_prop`, so --external-constants globs
  // and readers still see where it came from. Its placeholder is "c_" and
  // the FQN with '_' for '.', as torch.export names a lifted constant's.
  std::deque<std::string> newValueNames; // stable storage for the keys of newValues
  NameTable newValues; // placeholders named so far ("a.b" and "a_b" meet as "a_b")
  // Every name freshFqn tries holds "_prop": a table without such a key (the
  // constants, a graph's values: each unchanged until its method is done)
  // cannot hold it, and is not looked up per fold (a miss in a 100k+ table).
  auto anyProp = [](const auto &table) {
    return std::any_of(table.begin(), table.end(),
                       [](const auto &item) { return item.first.find("_prop") != std::string::npos; });
  };
  const bool constantsHaveProp = anyProp(program.constants);
  const Graph *propChecked = nullptr;
  bool valuesHaveProp = true;
  auto freshFqn = [&](const Graph &graph, uint32_t source) {
    if (propChecked != &graph) {
      propChecked = &graph;
      valuesHaveProp = anyProp(graph.tensorValues);
    }
    uint32_t root = rootOf[source] == kNone ? source : rootOf[source];
    const std::string base = entryAt(root).first + "_prop";
    for (int &k = nextSuffix[root];; ++k) {
      std::string fqn = k == 0 ? base : base + "_" + std::to_string(k);
      std::string value = "c_" + fqn; // torch.export's placeholder for a lifted tensor constant
      std::replace(value.begin(), value.end(), '.', '_');
      if ((constantsHaveProp && program.constants.contains(fqn)) || pendingNames.find(fqn) != kNone ||
          (valuesHaveProp && graph.tensorValues.contains(value)) || newValues.find(value) != kNone)
        continue;
      const std::string &kept = newValueNames.emplace_back(std::move(value));
      newValues.insert(kept);
      ++k;
      return std::make_tuple(std::move(fqn), &kept, root);
    }
  };

  StringMap<OpTarget> targets; // parsed once per distinct target
  for (MethodState &st : methods) {
    ExportedProgram &ep = *st.ep;
    Graph &graph = ep.graph;
    struct Added {
      uint32_t value;                  // id of the folded node's output
      size_t valuePos;                 // its position in tensorValues
      const std::string *fqn;          // its constant (in pending)
      const std::string *placeholder;  // the constant's placeholder (in newValueNames)
    };
    std::vector<Added> added;
    // Kept nodes move down over folded ones in place (no second node array);
    // their uses of folded values take the placeholder's name on the way.
    size_t keptNodes = 0, use = 0, candidate = 0, outHint = 0;
    for (size_t k = 0; k < graph.nodes.size(); ++k) {
      Node &node = graph.nodes[k];
      // Exactly one tensor operand, a constant (or the result of an earlier fold).
      size_t first = use, operands = 0;
      for (const auto &in : node.inputs) forEachTensorName(in.arg, [&](const std::string &) { ++operands; });
      use += operands;
      uint32_t operand = operands == 1 ? st.uses[first] : kNone;
      uint32_t outId = kNone;
      if (operand != kNone && singleTensorOutput(node)) outId = st.candidates[candidate++];
      std::optional<ConstantTensor> view;
      ValueState *src = operand != kNone && st.values[operand].constant != kNone ? &st.values[operand] : nullptr;
      size_t outPos = src && outId != kNone ? positionFrom(graph.tensorValues, node.outputs[0].name, outHint)
                                            : kNoPosition;
      const TensorMeta *outMeta =
          outPos != kNoPosition ? &(graph.tensorValues.begin() + std::ptrdiff_t(outPos))->second : nullptr;
      const OpTarget *target = nullptr;
      if (outMeta) {
        auto [slot, unseen] = targets.try_emplace(node.target);
        if (unseen) slot->second = parseTarget(node.target);
        target = &slot->second;
      }
      if (outMeta && outMeta->isStatic() && !st.values[outId].graphOutput && target->dialect == TargetDialect::Edge) {
        // The table entry itself unless its strides need filling in (no copy).
        const ConstantTensor *entry = &entryAt(src->constant).second;
        std::optional<ConstantTensor> filled;
        if (entry->strides.size() != entry->sizes.size()) filled = withStrides(*entry);
        const ConstantTensor &in = filled ? *filled : *entry;
        view = viewOf(node, *target, in);
        if (view) {
          // The result must be what the graph says: dtype, shape, and the
          // layout the emitter picks from the strides.
          bool same = view->dtype == outMeta->dtype && view->sizes.size() == outMeta->sizes.size();
          for (size_t d = 0; same && d < view->sizes.size(); ++d) same = view->sizes[d] == outMeta->sizes[d].value;
          bool outChannelsLast = false; // only rank 4-5 strides can say channels-last
          if (size_t rank = outMeta->strides.size(); rank >= 4 && rank <= 5) {
            std::vector<int64_t> outStrides;
            for (const auto &s : outMeta->strides) outStrides.push_back(s.value);
            outChannelsLast = channelsLastStrides(outStrides);
          }
          if (!same || channelsLastStrides(view->strides) != outChannelsLast ||
              !view->storageBytesNeeded())
            view.reset();
        }
        if (view && mode == FoldConstantsMode::Auto) {
          uint32_t key = storageId(src->constant);
          bool sameBytes = isContiguous(in) && isContiguous(*view) && in.storageOffset == view->storageOffset &&
                           denseBytes(in) == denseBytes(*view);
          bool sourceDies = src->uses == 1 && storageRef(key) == 1;
          auto inBytes = denseBytes(in), outBytes = denseBytes(*view);
          if (!sameBytes && !(sourceDies && inBytes && outBytes && *outBytes <= *inBytes)) view.reset();
        }
        if (view) view->data = in.data;
      }
      if (!view) {
        if (keptNodes != k) graph.nodes[keptNodes] = std::move(node);
        Node &kept = graph.nodes[keptNodes++];
        size_t u = first;
        for (auto &in : kept.inputs)
          forEachTensorNameMut(in.arg, true, [&](std::string &n, bool renamable) {
            uint32_t id = st.uses[u++];
            if (renamable && id != kNone && st.values[id].added != kNone) n = *added[st.values[id].added].placeholder;
          });
        continue;
      }
      uint32_t source = src->constant;
      auto [fqn, value, root] = freshFqn(graph, source);
      uint32_t key = storageId(source);
      const std::string &name = pending.emplace_back(std::move(fqn), std::move(*view)).first;
      pendingNames.insert(name);
      uint32_t pos = uint32_t(tableSize + pending.size() - 1);
      grow(pos + 1);
      storageOf[pos] = key;
      rootOf[pos] = root;
      tracked[pos] = 1;
      ValueState &out = st.values[outId];
      out.constant = pos;
      out.added = uint32_t(added.size());
      // The view keeps the storage alive in place of its source when that dies.
      ValueState &from = st.values[operand];
      if (--from.uses == 0) from.dead = true;
      else ++storageRef(key);
      added.push_back({outId, outPos, &name, value});
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
    std::vector<uint8_t> deadSpec(specs.size(), 0);
    std::vector<size_t> deadValues; // positions in tensorValues
    for (const ValueState &v : st.values)
      if (v.dead && v.spec != kNone) {
        deadSpec[v.spec] = 1;
        --refs[v.constant];
      }
    size_t n = specs.size(), boundary = 0;
    while (boundary < n && specs[boundary].kind != InputKind::UserInput &&
           specs[boundary].kind != InputKind::ConstantInput && specs[boundary].kind != InputKind::Token)
      ++boundary;
    size_t keptSpecs = 0, insertAt = 0, deadHint = 0;
    for (size_t k = 0; k < n; ++k) {
      if (k == boundary) insertAt = keptSpecs;
      if (deadSpec[k]) {
        deadValues.push_back(positionFrom(graph.tensorValues, specs[k].arg.name, deadHint));
        continue;
      }
      if (keptSpecs != k) {
        specs[keptSpecs] = std::move(specs[k]);
        inputs[keptSpecs] = std::move(inputs[k]);
      }
      ++keptSpecs;
    }
    if (boundary == n) insertAt = keptSpecs;
    specs.erase(specs.begin() + static_cast<std::ptrdiff_t>(keptSpecs), specs.end());
    inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(keptSpecs), inputs.end());
    // Per tensorValues position: 0 keep, 1 drop, 2 + k rename to added[k]'s placeholder.
    std::vector<uint32_t> action(graph.tensorValues.size(), 0);
    for (size_t pos : deadValues)
      if (pos != kNoPosition) action[pos] = 1;
    size_t live = 0;
    for (size_t k = 0; k < added.size(); ++k) {
      const Added &a = added[k];
      if (st.values[a.value].dead) { // folded again further on: no placeholder, no constant
        action[a.valuePos] = 1;
        continue;
      }
      if (action[a.valuePos] == 0) action[a.valuePos] = uint32_t(2 + k);
      ++refs[st.values[a.value].constant];
      ++live;
    }
    // The new entries are made in place, default ones filled in (an Argument
    // is 328 bytes: building each elsewhere and moving it twice cost more
    // than the rest of this sweep).
    auto at = static_cast<std::ptrdiff_t>(insertAt);
    specs.insert(specs.begin() + at, live, InputSpec{});
    inputs.insert(inputs.begin() + at, live, Argument{});
    size_t slot = insertAt;
    for (const Added &a : added) {
      if (st.values[a.value].dead) continue;
      InputSpec &spec = specs[slot];
      spec.kind = InputKind::TensorConstant;
      spec.arg.kind = ArgKind::Tensor;
      spec.arg.name = *a.placeholder;
      spec.target = *a.fqn;
      Argument &input = inputs[slot++];
      input.kind = ArgKind::Tensor;
      input.name = *a.placeholder;
    }
    // One sweep over the value table: dead values leave, folded ones take the
    // placeholder's name in place (OrderedMap::erase is linear per call).
    size_t pos = 0;
    graph.tensorValues.rewrite([&](std::string &name, TensorMeta &) {
      uint32_t act = action[pos++];
      if (act == 1) return false;
      if (act >= 2) name = *added[act - 2].placeholder;
      return true;
    });
  }

  // Constants no method refers to any more leave the table (only ones this
  // pass orphaned: a table entry nothing used before stays as it was).
  auto dropped = [&](size_t pos) { return tracked[pos] && refs[pos] == 0; };
  bool drop = false;
  for (size_t pos = 0; pos < tableSize && !drop; ++pos) drop = dropped(pos);
  if (drop) {
    size_t pos = 0;
    program.constants.rewrite([&](std::string &, ConstantTensor &) { return !dropped(pos++); });
  }
  for (size_t k = 0; k < pending.size(); ++k)
    if (!dropped(tableSize + k)) program.constants.set(pending[k].first, std::move(pending[k].second));
}

void foldConstants(Program &program) { foldConstantsWith(program, FoldConstantsMode::Auto); }

} // namespace exir::edge
