//===- Serde/TorchPickle.cpp - The pickle subset of torch.save archives ---===//
//
// A stack machine over the opcodes torch.save emits with pickle protocol 2 (and
// the few protocol-4 ones a non-default pickle_protocol adds). Callables are
// never executed; the handful of allow-listed torch globals are interpreted.
//
//===----------------------------------------------------------------------===//
#include "Serde/TorchPickle.h"
#include "Support/CheckedMath.h"
#include "Support/Error.h"

#include <cstring>
#include <memory>
#include <unordered_map>

namespace exir {

namespace {

struct Value;
using ValuePtr = std::shared_ptr<Value>;

struct Value {
  enum class Kind { None, Bool, Int, Float, String, Bytes, Tuple, List, Dict, Global, Storage, Tensor };
  Kind kind = Kind::None;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string text;   // String / Bytes payload; Global module
  std::string name;   // Global name
  std::vector<ValuePtr> items;                          // Tuple / List
  std::vector<std::pair<ValuePtr, ValuePtr>> entries;   // Dict
  PickledTensor tensor;                                 // Storage (key, dtype, bytes) / Tensor
  bool onPath = false;                                  // being walked by Collector
};

/// Deepest container nesting a pickle may have (a state dict nests a few levels).
constexpr size_t kMaxPickleDepth = 1000;
/// Most (container, item) visits when collecting tensors: shared references
/// (memo GETs) can make a small pickle describe an exponentially large tree.
constexpr size_t kMaxPickleVisits = size_t(1) << 22;

struct StorageClass {
  const char *name;
  ScalarType dtype;
};
const StorageClass kStorageClasses[] = {
    {"FloatStorage", ScalarType::Float},   {"DoubleStorage", ScalarType::Double},
    {"HalfStorage", ScalarType::Half},     {"BFloat16Storage", ScalarType::BFloat16},
    {"LongStorage", ScalarType::Long},     {"IntStorage", ScalarType::Int},
    {"ShortStorage", ScalarType::Short},   {"CharStorage", ScalarType::Char},
    {"ByteStorage", ScalarType::Byte},     {"BoolStorage", ScalarType::Bool},
    {"ComplexFloatStorage", ScalarType::ComplexFloat},
    {"ComplexDoubleStorage", ScalarType::ComplexDouble},
    {"UntypedStorage", ScalarType::Byte},
};

class Unpickler {
public:
  Unpickler(std::string_view data, const std::string &where) : data_(data), where_(where) {}
  Unpickler(const Unpickler &) = delete;
  Unpickler &operator=(const Unpickler &) = delete;
  /// A pickle can make a container hold itself (memo GET + APPEND), and nest
  /// containers deeply; both would leak or recurse if the values were freed
  /// through their own references. Every value is owned here too, so emptying
  /// all containers first frees each value on its own, flat.
  ~Unpickler() {
    for (const auto &v : all_) {
      v->items.clear();
      v->entries.clear();
    }
  }

  ValuePtr run();

private:
  ValuePtr make(Value::Kind kind) {
    auto v = std::make_shared<Value>();
    v->kind = kind;
    all_.push_back(v);
    return v;
  }
  [[noreturn]] void fail(const std::string &message) const {
    throw Error("pickle: " + message + " (opcode at byte " + std::to_string(opcodeAt_) + ")", where_);
  }
  const char *take(size_t n) {
    if (n > data_.size() - pos_) fail("truncated pickle");
    const char *p = data_.data() + pos_;
    pos_ += n;
    return p;
  }
  uint64_t littleEndian(size_t n) {
    const char *p = take(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    return v;
  }
  std::string line() {
    size_t end = data_.find('\n', pos_);
    if (end == std::string_view::npos) fail("truncated pickle");
    std::string s(data_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  ValuePtr pop() {
    if (stack_.size() <= markFloor()) fail("stack underflow");
    ValuePtr v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  size_t markFloor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<ValuePtr> popToMark() {
    if (marks_.empty()) fail("no MARK on the stack");
    size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<ValuePtr> items(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(mark)),
                                std::make_move_iterator(stack_.end()));
    stack_.resize(mark);
    return items;
  }
  ValuePtr &top() {
    if (stack_.size() <= markFloor()) fail("stack underflow");
    return stack_.back();
  }
  ValuePtr string(std::string s, Value::Kind kind = Value::Kind::String) {
    auto v = make(kind);
    v->text = std::move(s);
    return v;
  }
  ValuePtr integer(int64_t i) {
    auto v = make(Value::Kind::Int);
    v->intValue = i;
    return v;
  }
  void setItems(const ValuePtr &target, std::vector<ValuePtr> &items) {
    if (target->kind != Value::Kind::Dict) fail("SETITEM(S) on a non-dict");
    if (items.size() % 2) fail("SETITEMS with an odd number of items");
    for (size_t i = 0; i < items.size(); i += 2) target->entries.emplace_back(items[i], items[i + 1]);
  }
  void appendItems(const ValuePtr &target, std::vector<ValuePtr> &items) {
    if (target->kind != Value::Kind::List) fail("APPEND(S) on a non-list");
    for (auto &item : items) target->items.push_back(item);
  }
  ValuePtr tuple(std::vector<ValuePtr> items) {
    auto v = make(Value::Kind::Tuple);
    v->items = std::move(items);
    return v;
  }

  int64_t intArg(const ValuePtr &v, const char *what) {
    if (v->kind == Value::Kind::Int || v->kind == Value::Kind::Bool) return v->intValue;
    fail(std::string("expected an int for ") + what);
  }
  std::vector<int64_t> intTuple(const ValuePtr &v, const char *what) {
    if (v->kind != Value::Kind::Tuple && v->kind != Value::Kind::List)
      fail(std::string("expected a tuple for ") + what);
    std::vector<int64_t> out;
    for (const auto &item : v->items) out.push_back(intArg(item, what));
    return out;
  }
  ValuePtr persistentLoad(const ValuePtr &pid);
  ValuePtr reduce(const ValuePtr &callable, const ValuePtr &args);
  ValuePtr rebuildTensor(const std::vector<ValuePtr> &args, bool v3);

  std::string_view data_;
  std::string where_;
  size_t pos_ = 0, opcodeAt_ = 0;
  std::vector<ValuePtr> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, ValuePtr> memo_;
  std::vector<ValuePtr> all_; // every value made, see ~Unpickler
};

ValuePtr Unpickler::persistentLoad(const ValuePtr &pid) {
  // ('storage', <storage class>, key, location, numel)
  if (pid->kind != Value::Kind::Tuple || pid->items.size() < 5 ||
      pid->items[0]->kind != Value::Kind::String || pid->items[0]->text != "storage")
    fail("unsupported persistent id (expected a ('storage', ...) tuple)");
  const ValuePtr &cls = pid->items[1];
  if (cls->kind != Value::Kind::Global || cls->text != "torch")
    fail("unsupported storage class in persistent id");
  auto storage = make(Value::Kind::Storage);
  bool known = false;
  for (const auto &sc : kStorageClasses)
    if (cls->name == sc.name) {
      storage->tensor.dtype = sc.dtype;
      known = true;
    }
  if (!known) fail("unsupported storage class 'torch." + cls->name + "'");
  if (pid->items[2]->kind != Value::Kind::String) fail("storage key is not a string");
  storage->tensor.storageKey = pid->items[2]->text;
  int64_t numel = intArg(pid->items[4], "storage size");
  auto bytes = numel < 0 ? std::nullopt : checkedMul<uint64_t>(uint64_t(numel), elementSize(storage->tensor.dtype));
  if (!bytes || *bytes > uint64_t(INT64_MAX))
    fail("storage '" + storage->tensor.storageKey + "' has an invalid size of " + std::to_string(numel) + " elements");
  storage->tensor.storageBytes = *bytes;
  return storage;
}

ValuePtr Unpickler::rebuildTensor(const std::vector<ValuePtr> &args, bool v3) {
  // v2: (storage, offset, size, stride, requires_grad, hooks[, metadata])
  // v3: (storage, offset, size, stride, requires_grad, hooks, dtype[, metadata])
  if (args.size() < (v3 ? 7u : 6u)) fail("too few arguments to _rebuild_tensor");
  if (args[0]->kind != Value::Kind::Storage) fail("_rebuild_tensor without a storage");
  auto t = make(Value::Kind::Tensor);
  t->tensor = args[0]->tensor;
  t->tensor.storageOffset = intArg(args[1], "storage offset");
  t->tensor.sizes = intTuple(args[2], "sizes");
  t->tensor.strides = intTuple(args[3], "strides");
  if (v3) {
    const ValuePtr &dtype = args[6];
    if (dtype->kind != Value::Kind::Global || dtype->text != "torch") fail("unsupported dtype argument");
    ScalarType found = ScalarType::Undefined;
    for (int k = 0; k <= static_cast<int>(ScalarType::UInt64); ++k)
      if (torchName(static_cast<ScalarType>(k)) == "torch." + dtype->name) found = static_cast<ScalarType>(k);
    if (found == ScalarType::Undefined) fail("unsupported dtype 'torch." + dtype->name + "'");
    t->tensor.dtype = found;
  }
  return t;
}

ValuePtr Unpickler::reduce(const ValuePtr &callable, const ValuePtr &args) {
  if (callable->kind != Value::Kind::Global) fail("REDUCE on a non-global callable");
  if (args->kind != Value::Kind::Tuple) fail("REDUCE arguments are not a tuple");
  const std::string qualified = callable->text + "." + callable->name;
  const auto &a = args->items;
  if (qualified == "collections.OrderedDict") return make(Value::Kind::Dict);
  if (qualified == "torch._utils._rebuild_tensor_v2") return rebuildTensor(a, false);
  if (qualified == "torch._utils._rebuild_tensor_v3") return rebuildTensor(a, true);
  if (qualified == "torch._utils._rebuild_parameter" ||
      qualified == "torch._utils._rebuild_parameter_with_state") {
    if (a.empty() || a[0]->kind != Value::Kind::Tensor) fail(qualified + " without a tensor");
    return a[0];
  }
  if (qualified == "torch._export.serde.serialize._reconstruct_fake_tensor") {
    auto t = make(Value::Kind::Tensor);
    t->tensor.fake = true;
    return t;
  }
  fail("unsupported pickle callable '" + qualified + "'");
}

ValuePtr Unpickler::run() {
  while (true) {
    opcodeAt_ = pos_;
    unsigned char op = static_cast<unsigned char>(*take(1));
    switch (op) {
    case 0x80: take(1); break;  // PROTO
    case 0x95: take(8); break;  // FRAME
    case '.':                   // STOP
      if (stack_.size() != 1 || !marks_.empty()) fail("malformed pickle at STOP");
      return stack_.back();
    case '(': marks_.push_back(stack_.size()); break; // MARK
    case '0': pop(); break;                           // POP
    case '1': popToMark(); break;                     // POP_MARK
    case '2': stack_.push_back(top()); break;         // DUP
    case 'N': stack_.push_back(make(Value::Kind::None)); break;
    case 0x88:
    case 0x89: {
      auto v = make(Value::Kind::Bool);
      v->intValue = op == 0x88;
      stack_.push_back(v);
      break;
    }
    case 'J': stack_.push_back(integer(static_cast<int32_t>(littleEndian(4)))); break;
    case 'K': stack_.push_back(integer(static_cast<int64_t>(littleEndian(1)))); break;
    case 'M': stack_.push_back(integer(static_cast<int64_t>(littleEndian(2)))); break;
    case 0x8a: { // LONG1
      size_t n = static_cast<size_t>(littleEndian(1));
      if (n > 8) fail("integer too large");
      uint64_t v = n ? littleEndian(n) : 0;
      if (n && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n); // sign-extend
      stack_.push_back(integer(static_cast<int64_t>(v)));
      break;
    }
    case 'G': { // BINFLOAT, big-endian
      const char *p = take(8);
      uint64_t bits = 0;
      for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<unsigned char>(p[i]);
      auto v = make(Value::Kind::Float);
      std::memcpy(&v->floatValue, &bits, 8);
      stack_.push_back(v);
      break;
    }
    case 'X':
    case 0x8c:
    case 0x8d:
    case 'T':
    case 'U':
    case 'B':
    case 'C':
    case 0x8e: {
      size_t width = (op == 'X' || op == 'T' || op == 'B') ? 4 : (op == 0x8d || op == 0x8e) ? 8 : 1;
      uint64_t n = littleEndian(width);
      if (n > data_.size() - pos_) fail("truncated pickle");
      bool bytes = op == 'B' || op == 'C' || op == 0x8e;
      stack_.push_back(string(std::string(take(n), n), bytes ? Value::Kind::Bytes : Value::Kind::String));
      break;
    }
    case '}': stack_.push_back(make(Value::Kind::Dict)); break;
    case ']': stack_.push_back(make(Value::Kind::List)); break;
    case ')': stack_.push_back(tuple({})); break;
    case 'd': { // DICT
      auto items = popToMark();
      auto d = make(Value::Kind::Dict);
      setItems(d, items);
      stack_.push_back(d);
      break;
    }
    case 'l': { // LIST
      auto items = popToMark();
      auto l = make(Value::Kind::List);
      l->items = std::move(items);
      stack_.push_back(l);
      break;
    }
    case 't': stack_.push_back(tuple(popToMark())); break;
    case 0x85:
    case 0x86:
    case 0x87: {
      size_t n = op - 0x84u;
      std::vector<ValuePtr> items(n);
      for (size_t i = n; i-- > 0;) items[i] = pop();
      stack_.push_back(tuple(std::move(items)));
      break;
    }
    case 's': {
      ValuePtr value = pop(), key = pop();
      std::vector<ValuePtr> items{key, value};
      setItems(top(), items);
      break;
    }
    case 'u': {
      auto items = popToMark();
      setItems(top(), items);
      break;
    }
    case 'a': {
      std::vector<ValuePtr> items{pop()};
      appendItems(top(), items);
      break;
    }
    case 'e': {
      auto items = popToMark();
      appendItems(top(), items);
      break;
    }
    case 'c': { // GLOBAL "module\nname\n"
      auto g = make(Value::Kind::Global);
      g->text = line();
      g->name = line();
      stack_.push_back(g);
      break;
    }
    case 0x93: { // STACK_GLOBAL
      ValuePtr name = pop(), module = pop();
      if (name->kind != Value::Kind::String || module->kind != Value::Kind::String)
        fail("STACK_GLOBAL needs two strings");
      auto g = make(Value::Kind::Global);
      g->text = module->text;
      g->name = name->text;
      stack_.push_back(g);
      break;
    }
    case 'R': {
      ValuePtr args = pop(), callable = pop();
      stack_.push_back(reduce(callable, args));
      break;
    }
    case 'b': pop(); break; // BUILD: object state (OrderedDict _metadata, ...) is not needed
    case 'Q': stack_.push_back(persistentLoad(pop())); break;
    case 'q': memo_[littleEndian(1)] = top(); break;
    case 'r': memo_[littleEndian(4)] = top(); break;
    case 0x94: memo_[memo_.size()] = top(); break;
    case 'h':
    case 'j': {
      uint64_t index = littleEndian(op == 'h' ? 1 : 4);
      auto it = memo_.find(index);
      if (it == memo_.end()) fail("memo key " + std::to_string(index) + " is not defined");
      stack_.push_back(it->second);
      break;
    }
    default: {
      char buf[8];
      snprintf(buf, sizeof buf, "0x%02x", op);
      fail(std::string("unsupported opcode ") + buf);
    }
    }
  }
}

/// Walks the value tree for tensors, refusing cycles, excessive depth and
/// exponential sharing.
class Collector {
public:
  Collector(const std::string &where, std::vector<std::pair<std::string, PickledTensor>> &out)
      : where_(where), out_(out) {}

  /// `key` is the dotted path of `v`; it is extended in place for each child
  /// and cut back after it (a shared-reference pickle visits millions of entries,
  /// and a new string per entry was most of the time it took to refuse one).
  void collect(Value &v, std::string &key, size_t depth) {
    if (++visits_ > kMaxPickleVisits)
      throw Error("pickle: more than " + std::to_string(kMaxPickleVisits) +
                      " container entries when expanded (too many shared references)",
                  where_);
    if (v.kind != Value::Kind::Tuple && v.kind != Value::Kind::List && v.kind != Value::Kind::Dict) {
      if (v.kind == Value::Kind::Tensor) out_.emplace_back(key, v.tensor);
      return;
    }
    if (v.onPath) throw Error("pickle: container at '" + key + "' contains itself", where_);
    if (depth >= kMaxPickleDepth)
      throw Error("pickle: containers nest deeper than " + std::to_string(kMaxPickleDepth) + " levels", where_);
    v.onPath = true;
    size_t keep = key.size();
    auto descend = [&](std::string_view part, Value &item) {
      if (keep) key += '.';
      key += part;
      collect(item, key, depth + 1);
      key.resize(keep);
    };
    if (v.kind == Value::Kind::Dict) {
      for (const auto &entry : v.entries) {
        if (entry.first->kind != Value::Kind::String) throw Error("pickle: a dict key is not a string", where_);
        descend(entry.first->text, *entry.second);
      }
    } else {
      for (size_t i = 0; i < v.items.size(); ++i) descend(std::to_string(i), *v.items[i]);
    }
    v.onPath = false;
  }

private:
  const std::string &where_;
  std::vector<std::pair<std::string, PickledTensor>> &out_;
  size_t visits_ = 0;
};

} // namespace

std::vector<std::pair<std::string, PickledTensor>> readPickledTensors(std::string_view pickle,
                                                                      const std::string &where) {
  Unpickler unpickler(pickle, where);
  ValuePtr root = unpickler.run();
  std::vector<std::pair<std::string, PickledTensor>> out;
  std::string key;
  Collector(where, out).collect(*root, key, 0);
  return out;
}

} // namespace exir
