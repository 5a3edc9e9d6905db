//===- Edge/DecompositionRules.cpp - The decomposition engine -------------===//
//
// A rule names the op it matches, an optional condition, and steps: calls of
// other ops whose arguments are expressions over the matched node's arguments
// ($input, $eps, with schema defaults filled in), its outputs ($out, $out0...)
// and the values of earlier steps. Expressions are small: literals, lists,
// + - * // / on ints (symbolic sizes included, see SymSize.h) and floats,
// comparisons, and/or/not, indexing and slicing, .shape/.dtype/.rank of
// tensors, and a few functions (len, range, swap, set, fill, dim, coalesce,
// sqrt, prod).
// Each new value gets metadata from its step's `meta` entry (or that of the
// step's first tensor argument); a step output named `out`/`outN` reuses the
// matched node's value and metadata. Symbolic sizes passed to SymInt
// parameters become sym_size.int nodes on a tensor that has that size.
//
//===----------------------------------------------------------------------===//
#include "Edge/DecompositionRules.h"
#include "Edge/EdgeUtil.h"
#include "Edge/SymSize.h"
#include "Ops/OperatorTable.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

namespace exir::embedded {
std::string_view builtinDecompositionsText();
}

namespace exir::edge {

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

namespace {

//===----------------------------------------------------------------------===//
// Values and expressions
//===----------------------------------------------------------------------===//

struct Val {
  enum class K { None, Int, Float, Bool, Str, Dtype, Tensor, List, Raw } k = K::None;
  SymInt i;
  std::string symName; // Int read from a named SymInt argument
  double f = 0;
  bool b = false;
  std::string s; // Str text / Tensor name
  ScalarType dt = ScalarType::Undefined;
  std::vector<Val> list;
  // The argument as read (in the matched node, or its schema default), passed
  // through unchanged; a pointer, as Vals are copied on every read of a name.
  const Argument *raw = nullptr;

  static Val none() { return {}; }
  static Val integer(SymInt v) { Val x; x.k = K::Int; x.i = std::move(v); return x; }
  static Val real(double v) { Val x; x.k = K::Float; x.f = v; return x; }
  static Val boolean(bool v) { Val x; x.k = K::Bool; x.b = v; return x; }
  static Val tensor(std::string n) { Val x; x.k = K::Tensor; x.s = std::move(n); return x; }
  static Val dtype(ScalarType t) { Val x; x.k = K::Dtype; x.dt = t; return x; }
  static Val ofList(std::vector<Val> l) { Val x; x.k = K::List; x.list = std::move(l); return x; }
};

/// Value names ($input, $out0, step outputs) are numbered once, when rules load,
/// so that a rule reads its values by index instead of by string. The numbering is
/// shared by every rule set of the process, and not locked: rules load on one
/// thread at a time (the tools load them on the main thread).
std::unordered_map<std::string, int> &nameIds() {
  static std::unordered_map<std::string, int> ids;
  return ids;
}
int internName(const std::string &name) { return nameIds().try_emplace(name, int(nameIds().size())).first->second; }
/// -1 when no rule ever names it (then no expression can read it either).
int nameId(const std::string &name) {
  auto it = nameIds().find(name);
  return it == nameIds().end() ? -1 : it->second;
}

struct Scope {
  Graph &graph;
  // Built only when an error needs it: the description walks the node's stack trace.
  std::function<std::string()> where;
  std::vector<Val> slots;     // by name id
  std::vector<uint8_t> bound; // slots[id] holds a value
  [[noreturn]] void fail(const std::string &why) const { throw Error(why, {}, where()); }
  const Val *find(int id) const { return id >= 0 && size_t(id) < bound.size() && bound[size_t(id)] ? &slots[size_t(id)] : nullptr; }
  void set(int id, Val v) {
    if (size_t(id) >= slots.size()) {
      slots.resize(size_t(id) + 1);
      bound.resize(size_t(id) + 1);
    }
    slots[size_t(id)] = std::move(v);
    bound[size_t(id)] = 1;
  }
  void clear() { std::fill(bound.begin(), bound.end(), 0); }
};

const std::map<std::string, ScalarType> &dtypeNames() {
  static const std::map<std::string, ScalarType> m = {
      {"float32", ScalarType::Float}, {"float", ScalarType::Float}, {"float64", ScalarType::Double},
      {"float16", ScalarType::Half},  {"bfloat16", ScalarType::BFloat16}, {"int64", ScalarType::Long},
      {"long", ScalarType::Long},     {"int32", ScalarType::Int},     {"int8", ScalarType::Char},
      {"uint8", ScalarType::Byte},    {"int16", ScalarType::Short},   {"bool", ScalarType::Bool}};
  return m;
}

/// A rule expression parsed once, when the rules load, and evaluated in the
/// order it reads: left to right, each operation as soon as its operands are
/// known, so a bad value is reported where reading it would stop. A syntax
/// error parses as a Fail node where it stands: evaluating it first evaluates
/// what was read before the error (its kids), then reports the error, so an
/// expression reports the same error, at the same point, as reading it did.
struct Expr {
  enum class Op : uint8_t {
    Lit, Var, Or, And, Not, Cmp, Add, Sub, Mul, FloorDiv, Div, Neg, Attr, Index, List, Call, Fail,
  };
  Op op = Op::Lit;
  uint8_t flags = 0; // Cmp: which comparison (kComparisons); Index: kHasLo | kSlice | kHasHi | kUnclosed;
                     // Fail: kBadNumber | kBadFloat
  int id = -1;       // Var: name id
  std::string name;  // Var / Attr / Call name; Fail: the error (kBadNumber: the literal's text)
  Val lit;           // Lit
  std::vector<Expr> kids;
};
constexpr uint8_t kHasLo = 1, kSlice = 2, kHasHi = 4;
constexpr uint8_t kUnclosed = 8; // Index: the last kid is the Fail of a missing ']'
constexpr uint8_t kBadNumber = 1, kBadFloat = 2; // Fail: a literal std::stoll / std::stod refuses
constexpr const char *kComparisons[] = {"==", "!=", "<=", ">=", "<", ">"};

} // namespace

/// An expression of a rule: its text (for errors) and its parsed form (a
/// syntax error included, reported when the expression is evaluated).
struct CompiledExpr {
  std::string text;
  std::shared_ptr<const Expr> root;
  bool empty() const { return text.empty(); }
};

struct StepMeta {
  CompiledExpr like, dtype, sizes; // empty = not given
};

struct StepArg {
  std::string name;
  CompiledExpr expr;
  const SchemaArgument *param = nullptr;
  size_t index = 0; // in the schema: arguments are written in schema order
};

struct StepOutput {
  std::string name;
  int id = -1;
  bool reuse = false;              // out / outN: the matched node's value
  std::optional<StepMeta> meta;
};

struct Step {
  std::string op; // qualified name
  const OpSchema *schema = nullptr;
  std::string target; // the call's target string
  bool allowInferred = false; // view sizes: one may be written -1
  std::vector<StepArg> args;
  std::vector<StepOutput> outputs;
};

struct DecompositionRules::Rule {
  std::string match; // normalized qualified name
  CompiledExpr when;
  std::vector<Step> steps;
  std::vector<CompiledExpr> returns;
  std::string refusal; // non-empty: the op is refused with this message when the rule applies
  std::string where;   // "file:line"
};

/// A rule, or the YAML it is parsed from when first asked for: yaml-cpp takes
/// ~90M instructions for the whole builtin file, four fifths of lowering a
/// small program, and a program needs the rules of a few ops.
struct DecompositionRules::Slot {
  std::string match;      // normalized qualified op name, known before parsing
  std::string text;       // the rule's YAML, preceded by newlines up to its line in the file
  std::string sourceName;
  mutable std::shared_ptr<const Rule> rule; // set when parsed
  const Rule &get() const;
};

namespace {

/// The tokens of rule expressions: blanks, keywords and symbols, identifiers.
class ExprLexer {
protected:
  explicit ExprLexer(const std::string &text) : text_(text) {}
  const std::string &text_;
  size_t pos_ = 0;

  void skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(const std::string &tok) {
    skip();
    if (text_.compare(pos_, tok.size(), tok) != 0) return false;
    // Keywords must not run into an identifier.
    if (std::isalpha(static_cast<unsigned char>(tok[0])) && pos_ + tok.size() < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[pos_ + tok.size()])) || text_[pos_ + tok.size()] == '_'))
      return false;
    pos_ += tok.size();
    return true;
  }
  std::string ident() {
    skip();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }
  /// A numeric literal's text at pos_ (digits, '.', an exponent); `isFloat`
  /// when it has anything but digits.
  std::string numberToken(bool &isFloat) {
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
                                   text_[pos_] == 'e' || text_[pos_] == 'E' ||
                                   ((text_[pos_] == '-' || text_[pos_] == '+') &&
                                    (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E')))) {
      if (!std::isdigit(static_cast<unsigned char>(text_[pos_]))) isFloat = true;
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
};

/// Parses an expression into an Expr. It never throws: a syntax error becomes
/// a Fail node, and the parse stops there (each production returns what it
/// has read, the Fail last).
class ExprParser : ExprLexer {
public:
  explicit ExprParser(const std::string &text) : ExprLexer(text) {}

  Expr parse() {
    Expr e = orExpr();
    if (failed_) return e;
    skip();
    if (pos_ != text_.size()) return failure("unexpected '" + text_.substr(pos_) + "'", one(std::move(e)));
    return e;
  }

private:
  bool failed_ = false; // a syntax error was read: nothing after it is

  /// The error `why`, reported after evaluating `before` (what was read).
  Expr failure(std::string why, std::vector<Expr> before = {}) {
    failed_ = true;
    Expr e = node(Expr::Op::Fail, std::move(before));
    e.name = std::move(why);
    return e;
  }
  static std::vector<Expr> one(Expr e) {
    std::vector<Expr> kids;
    kids.push_back(std::move(e));
    return kids;
  }
  static Expr node(Expr::Op op, std::vector<Expr> kids) {
    Expr e;
    e.op = op;
    e.kids = std::move(kids);
    return e;
  }
  static Expr binary(Expr::Op op, Expr a, Expr b) {
    std::vector<Expr> kids;
    kids.push_back(std::move(a));
    kids.push_back(std::move(b));
    return node(op, std::move(kids));
  }
  static Expr literal(Val v) {
    Expr e;
    e.lit = std::move(v);
    return e;
  }

  Expr orExpr() {
    Expr v = andExpr();
    while (!failed_ && eat("or")) v = binary(Expr::Op::Or, std::move(v), andExpr());
    return v;
  }
  Expr andExpr() {
    Expr v = notExpr();
    while (!failed_ && eat("and")) v = binary(Expr::Op::And, std::move(v), notExpr());
    return v;
  }
  Expr notExpr() {
    if (eat("not")) return node(Expr::Op::Not, one(notExpr()));
    return cmpExpr();
  }
  Expr cmpExpr() {
    Expr a = sumExpr();
    if (failed_) return a;
    for (uint8_t k = 0; k < std::size(kComparisons); ++k) {
      if (!eat(kComparisons[k])) continue;
      Expr c = binary(Expr::Op::Cmp, std::move(a), sumExpr());
      c.flags = k;
      return c;
    }
    return a;
  }
  /// Left-associative operators of one precedence level over `operand` (a
  /// longer spelling listed before its prefix: "//" before "/").
  using Level = std::initializer_list<std::pair<const char *, Expr::Op>>;
  Expr leftAssociative(Expr (ExprParser::*operand)(), Level ops) {
    Expr v = (this->*operand)();
    for (bool more = true; more && !failed_;) {
      more = false;
      for (const auto &[spelling, op] : ops)
        if (eat(spelling)) {
          v = binary(op, std::move(v), (this->*operand)());
          more = true;
          break;
        }
    }
    return v;
  }
  Expr sumExpr() { return leftAssociative(&ExprParser::prodExpr, {{"+", Expr::Op::Add}, {"-", Expr::Op::Sub}}); }
  Expr prodExpr() {
    return leftAssociative(&ExprParser::unary,
                           {{"*", Expr::Op::Mul}, {"//", Expr::Op::FloorDiv}, {"/", Expr::Op::Div}});
  }
  Expr unary() {
    if (eat("-")) return node(Expr::Op::Neg, one(unary()));
    Expr v = primary();
    return failed_ ? v : postfix(std::move(v));
  }
  Expr postfix(Expr v) {
    while (!failed_) {
      skip();
      if (pos_ < text_.size() && text_[pos_] == '.' && pos_ + 1 < text_.size() &&
          std::isalpha(static_cast<unsigned char>(text_[pos_ + 1]))) {
        ++pos_;
        std::string attr = ident();
        v = node(Expr::Op::Attr, one(std::move(v)));
        v.name = std::move(attr);
      } else if (eat("[")) {
        std::vector<Expr> kids = one(std::move(v));
        uint8_t flags = 0;
        skip();
        if (!(pos_ < text_.size() && text_[pos_] == ':')) {
          kids.push_back(orExpr());
          flags |= kHasLo;
        }
        if (!failed_ && eat(":")) {
          flags |= kSlice;
          skip();
          if (!(pos_ < text_.size() && text_[pos_] == ']')) {
            kids.push_back(orExpr());
            flags |= kHasHi;
          }
        }
        if (!failed_ && !eat("]")) {
          kids.push_back(failure("expected ']'"));
          flags |= kUnclosed;
        }
        v = node(Expr::Op::Index, std::move(kids));
        v.flags = flags;
      } else {
        break;
      }
    }
    return v;
  }
  /// `items` up to `close` (the opening bracket read): a List or Call node's
  /// kids, or a failure after them.
  std::optional<Expr> items(std::vector<Expr> &out, const char *close) {
    if (eat(close)) return std::nullopt;
    do out.push_back(orExpr());
    while (!failed_ && eat(","));
    if (failed_) return std::nullopt; // the failing item is the last kid
    if (!eat(close)) return failure(std::string("expected '") + close + "'", std::move(out));
    return std::nullopt;
  }
  Expr primary() {
    skip();
    if (pos_ >= text_.size()) return failure("unexpected end");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      bool isFloat = false;
      std::string num = numberToken(isFloat);
      try {
        return literal(isFloat ? Val::real(std::stod(num)) : Val::integer(SymInt::of(std::stoll(num))));
      } catch (const std::exception &) {
        Expr e = failure(std::move(num));
        e.flags = kBadNumber | (isFloat ? kBadFloat : 0);
        return e;
      }
    }
    if (c == '$') {
      ++pos_;
      Expr e;
      e.op = Expr::Op::Var;
      e.name = ident();
      e.id = internName(e.name);
      return e;
    }
    if (c == '\'') {
      size_t end = text_.find('\'', pos_ + 1);
      if (end == std::string::npos) return failure("unterminated string");
      Val v;
      v.k = Val::K::Str;
      v.s = text_.substr(pos_ + 1, end - pos_ - 1);
      pos_ = end + 1;
      return literal(std::move(v));
    }
    if (eat("(")) {
      Expr v = orExpr();
      if (!failed_ && !eat(")")) return failure("expected ')'", one(std::move(v)));
      return v;
    }
    if (eat("[")) {
      std::vector<Expr> kids;
      if (auto f = items(kids, "]")) return std::move(*f);
      return node(Expr::Op::List, std::move(kids));
    }
    std::string name = ident();
    if (name.empty()) return failure(std::string("unexpected '") + c + "'");
    if (name == "none" || name == "None" || name == "null") return literal(Val::none());
    if (name == "true" || name == "True") return literal(Val::boolean(true));
    if (name == "false" || name == "False") return literal(Val::boolean(false));
    if (name == "inf") return literal(Val::real(INFINITY));
    if (auto it = dtypeNames().find(name); it != dtypeNames().end()) return literal(Val::dtype(it->second));
    if (!eat("(")) return failure("unknown name '" + name + "' (values are written $name)");
    std::vector<Expr> kids;
    if (auto f = items(kids, ")")) return std::move(*f);
    Expr e = node(Expr::Op::Call, std::move(kids));
    e.name = std::move(name);
    return e;
  }
};

/// Evaluates a parsed expression against a scope. `live_` is false on the
/// untaken side of and/or: names are still looked up and syntax errors still
/// reported, nothing else is evaluated.
class ExprEvaluator {
public:
  ExprEvaluator(const std::string &text, Scope &scope) : text_(text), scope_(scope) {}
  Val run(const Expr &e) { return eval(e); }

private:
  const std::string &text_;
  Scope &scope_;
  bool live_ = true;

  [[noreturn]] void fail(const std::string &why) { scope_.fail("in expression '" + text_ + "': " + why); }

  bool truthy(const Val &v) {
    switch (v.k) {
    case Val::K::None: return false;
    case Val::K::Bool: return v.b;
    case Val::K::Int: return v.i.isExpr || v.i.value != 0;
    case Val::K::Float: return v.f != 0;
    case Val::K::List: return !v.list.empty();
    default: return true;
    }
  }
  int64_t concrete(const Val &v, const char *what) {
    if (v.k == Val::K::Bool) return v.b;
    if (v.k != Val::K::Int) fail(std::string(what) + " must be an int");
    if (v.i.isExpr) fail(std::string(what) + " must be a concrete int, not the symbolic size " + v.i.expr());
    return v.i.value;
  }
  double number(const Val &v) {
    if (v.k == Val::K::Float) return v.f;
    return double(concrete(v, "operand"));
  }
  bool equal(const Val &a, const Val &b) {
    if (a.k == Val::K::None || b.k == Val::K::None) return a.k == b.k;
    if ((a.k == Val::K::Int || a.k == Val::K::Bool) && (b.k == Val::K::Int || b.k == Val::K::Bool)) {
      if (a.k == Val::K::Int && b.k == Val::K::Int) return symEqual(a.i, b.i);
      return concrete(a, "operand") == concrete(b, "operand");
    }
    if (a.k == Val::K::Float || b.k == Val::K::Float) return number(a) == number(b);
    if (a.k != b.k) return false;
    switch (a.k) {
    case Val::K::Str: case Val::K::Tensor: return a.s == b.s;
    case Val::K::Dtype: return a.dt == b.dt;
    case Val::K::List:
      if (a.list.size() != b.list.size()) return false;
      for (size_t i = 0; i < a.list.size(); ++i)
        if (!equal(a.list[i], b.list[i])) return false;
      return true;
    default: return false;
    }
  }

  Val attribute(const Val &v, const std::string &attr) {
    if (v.k != Val::K::Tensor) fail("." + attr + " of a value that is not a tensor");
    const TensorMeta &m = metaOf(scope_.graph, v.s);
    if (attr == "shape") {
      std::vector<Val> sizes;
      sizes.reserve(m.sizes.size());
      for (const auto &s : m.sizes) sizes.push_back(Val::integer(s));
      return Val::ofList(std::move(sizes));
    }
    if (attr == "dtype") return Val::dtype(m.dtype);
    if (attr == "rank") return Val::integer(SymInt::of(int64_t(m.sizes.size())));
    fail("unknown attribute '." + attr + "' (shape, dtype, rank)");
  }
  /// seq[lo], or seq[lo:hi] when `slice`.
  Val subscript(const Val &seq, std::optional<int64_t> lo, std::optional<int64_t> hi, bool slice) {
    int64_t n = int64_t(seq.list.size());
    auto norm = [&](int64_t x) { return std::clamp<int64_t>(x < 0 ? x + n : x, 0, n); };
    if (!slice) {
      int64_t k = *lo < 0 ? *lo + n : *lo;
      if (k < 0 || k >= n) fail("index " + std::to_string(*lo) + " out of range for " + std::to_string(n));
      return seq.list[size_t(k)];
    }
    int64_t a = lo ? norm(*lo) : 0, b = hi ? norm(*hi) : n;
    std::vector<Val> part;
    for (int64_t k = a; k < b; ++k) part.push_back(seq.list[size_t(k)]);
    return Val::ofList(std::move(part));
  }
  Val shapeOf(const Val &t) {
    std::vector<Val> sizes;
    for (const auto &s : metaOf(scope_.graph, t.s).sizes) sizes.push_back(Val::integer(s));
    return Val::ofList(std::move(sizes));
  }

  Val call(const std::string &fn, std::vector<Val> &a) {
    if (!live_) return Val::none();
    auto arity = [&](size_t n) {
      if (a.size() != n) fail(fn + "() takes " + std::to_string(n) + " arguments");
    };
    if (fn == "len") {
      arity(1);
      if (a[0].k == Val::K::Tensor) return Val::integer(SymInt::of(int64_t(metaOf(scope_.graph, a[0].s).sizes.size())));
      if (a[0].k != Val::K::List) fail("len() of a value that is not a list");
      return Val::integer(SymInt::of(int64_t(a[0].list.size())));
    }
    if (fn == "range") {
      arity(1);
      std::vector<Val> out;
      for (int64_t k = 0; k < concrete(a[0], "range()"); ++k) out.push_back(Val::integer(SymInt::of(k)));
      return Val::ofList(std::move(out));
    }
    if (fn == "dim") { // dim(tensor, d): d normalized against the tensor's rank
      arity(2);
      int64_t rank = int64_t(metaOf(scope_.graph, a[0].s).sizes.size());
      int64_t d = concrete(a[1], "dim");
      return Val::integer(SymInt::of(d < 0 ? d + std::max<int64_t>(rank, 1) : d));
    }
    if (fn == "swap") { // swap(list, i, j)
      arity(3);
      if (a[0].k != Val::K::List) fail("swap() needs a list");
      Val l = Val::ofList(a[0].list);
      int64_t n = int64_t(l.list.size());
      int64_t i = concrete(a[1], "swap index"), j = concrete(a[2], "swap index");
      i = i < 0 ? i + n : i;
      j = j < 0 ? j + n : j;
      if (i < 0 || j < 0 || i >= n || j >= n) fail("swap index out of range");
      std::swap(l.list[size_t(i)], l.list[size_t(j)]);
      return l;
    }
    if (fn == "set") { // set(list, i, value)
      arity(3);
      Val l = Val::ofList(a[0].list);
      int64_t n = int64_t(l.list.size()), i = concrete(a[1], "set index");
      i = i < 0 ? i + n : i;
      if (i < 0 || i >= n) fail("set index out of range");
      l.list[size_t(i)] = a[2];
      return l;
    }
    if (fn == "fill") { // fill(list, n): a one-element list repeated to n elements (int[2] stride=[2])
      arity(2);
      if (a[0].k != Val::K::List) return Val::ofList(std::vector<Val>(size_t(concrete(a[1], "fill length")), a[0]));
      if (a[0].list.size() == 1) return Val::ofList(std::vector<Val>(size_t(concrete(a[1], "fill length")), a[0].list[0]));
      return a[0];
    }
    if (fn == "coalesce") {
      for (auto &v : a)
        if (v.k != Val::K::None) return v;
      return Val::none();
    }
    if (fn == "sqrt") {
      arity(1);
      return Val::real(std::sqrt(number(a[0])));
    }
    if (fn == "prod") {
      arity(1);
      SymInt p = SymInt::of(1);
      for (auto &v : a[0].list) p = symMul(p, v.i);
      return Val::integer(p);
    }
    if (fn == "float") {
      arity(1);
      return Val::real(number(a[0]));
    }
    if (fn == "is_floating") {
      arity(1);
      if (a[0].k != Val::K::Dtype) fail("is_floating() needs a dtype");
      return Val::boolean(isFloatingType(a[0].dt));
    }
    fail("unknown function '" + fn + "'");
  }

  Val eval(const Expr &e) {
    using Op = Expr::Op;
    switch (e.op) {
    case Op::Lit: return e.lit;
    case Op::Var: {
      const Val *v = scope_.find(e.id);
      if (!v) fail("unknown name '$" + e.name + "'");
      return *v;
    }
    case Op::Or: {
      Val v = eval(e.kids[0]);
      bool taken = live_ && truthy(v), saved = live_;
      if (taken) live_ = false;
      Val r = eval(e.kids[1]);
      live_ = saved;
      return live_ ? Val::boolean(taken || truthy(r)) : Val::none();
    }
    case Op::And: {
      Val v = eval(e.kids[0]);
      bool skipped = live_ && !truthy(v), saved = live_;
      if (skipped) live_ = false;
      Val r = eval(e.kids[1]);
      live_ = saved;
      return live_ ? Val::boolean(!skipped && truthy(r)) : Val::none();
    }
    case Op::Not: {
      Val v = eval(e.kids[0]);
      return live_ ? Val::boolean(!truthy(v)) : Val::none();
    }
    case Op::Cmp: {
      Val a = eval(e.kids[0]);
      Val b = eval(e.kids[1]);
      if (!live_) return Val::none();
      switch (e.flags) {
      case 0: return Val::boolean(equal(a, b));
      case 1: return Val::boolean(!equal(a, b));
      default: break;
      }
      double x = number(a), y = number(b);
      switch (e.flags) {
      case 2: return Val::boolean(x <= y);
      case 3: return Val::boolean(x >= y);
      case 4: return Val::boolean(x < y);
      default: return Val::boolean(x > y);
      }
    }
    case Op::Add: {
      Val v = eval(e.kids[0]);
      Val r = eval(e.kids[1]);
      if (!live_) return v;
      if (v.k == Val::K::List && r.k == Val::K::List) {
        v.raw = nullptr;
        v.list.insert(v.list.end(), r.list.begin(), r.list.end());
        return v;
      }
      if (v.k == Val::K::Int && r.k == Val::K::Int) return Val::integer(symAdd(v.i, r.i));
      return Val::real(number(v) + number(r));
    }
    case Op::Sub: {
      Val v = eval(e.kids[0]);
      Val r = eval(e.kids[1]);
      if (!live_) return v;
      if (v.k == Val::K::Int && r.k == Val::K::Int) return Val::integer(symAdd(v.i, symMul(SymInt::of(-1), r.i)));
      return Val::real(number(v) - number(r));
    }
    case Op::Mul: {
      Val v = eval(e.kids[0]);
      Val r = eval(e.kids[1]);
      if (!live_) return v;
      if (v.k == Val::K::List) {
        int64_t n = concrete(r, "list repeat count");
        std::vector<Val> out;
        for (int64_t k = 0; k < n; ++k) out.insert(out.end(), v.list.begin(), v.list.end());
        return Val::ofList(std::move(out));
      }
      if (v.k == Val::K::Int && r.k == Val::K::Int) return Val::integer(symMul(v.i, r.i));
      return Val::real(number(v) * number(r));
    }
    case Op::FloorDiv: {
      Val v = eval(e.kids[0]);
      Val r = eval(e.kids[1]);
      if (!live_) return v;
      return Val::integer(symFloorDiv(v.i, r.i));
    }
    case Op::Div: {
      Val v = eval(e.kids[0]);
      Val r = eval(e.kids[1]);
      if (!live_) return v;
      return Val::real(number(v) / number(r));
    }
    case Op::Neg: {
      Val v = eval(e.kids[0]);
      if (!live_) return v;
      if (v.k == Val::K::Int) return Val::integer(symMul(SymInt::of(-1), v.i));
      return Val::real(-number(v));
    }
    case Op::Attr: {
      Val v = eval(e.kids[0]);
      if (!live_) return v;
      return attribute(v, e.name);
    }
    case Op::Index: {
      Val v = eval(e.kids[0]);
      size_t next = 1;
      if (!live_) {
        if (e.flags & kHasLo) eval(e.kids[next++]);
        if (e.flags & kHasHi) eval(e.kids[next++]);
        if (e.flags & kUnclosed) eval(e.kids[next]);
        return v;
      }
      Val seq = v.k == Val::K::Tensor ? shapeOf(v) : v; // $x[i]: size i of tensor x
      if (seq.k != Val::K::List) fail("indexing a value that is not a list");
      std::optional<int64_t> lo, hi;
      if (e.flags & kHasLo) lo = concrete(eval(e.kids[next++]), "index");
      if (e.flags & kHasHi) hi = concrete(eval(e.kids[next++]), "slice end");
      if (e.flags & kUnclosed) eval(e.kids[next]); // the missing ']': throws
      return subscript(seq, lo, hi, e.flags & kSlice);
    }
    case Op::List: {
      std::vector<Val> items;
      items.reserve(e.kids.size());
      for (const auto &k : e.kids) items.push_back(eval(k));
      return Val::ofList(std::move(items));
    }
    case Op::Call: {
      std::vector<Val> args;
      args.reserve(e.kids.size());
      for (const auto &k : e.kids) args.push_back(eval(k));
      return call(e.name, args);
    }
    case Op::Fail: {
      // Dead or live, a syntax error is reported once what precedes it is read.
      for (const auto &k : e.kids) eval(k);
      if (e.flags & kBadNumber) { // the conversion throws again, as it did when parsed
        if (e.flags & kBadFloat) (void)std::stod(e.name);
        else (void)std::stoll(e.name);
      }
      fail(e.name);
    }
    }
    return Val::none();
  }
};

CompiledExpr compileExpr(std::string text) {
  CompiledExpr c;
  c.text = std::move(text);
  c.root = std::make_shared<const Expr>(ExprParser(c.text).parse());
  return c;
}

Val evaluate(const CompiledExpr &e, Scope &scope) { return ExprEvaluator(e.text, scope).run(*e.root); }

//===----------------------------------------------------------------------===//
// Arguments <-> values
//===----------------------------------------------------------------------===//

Val fromArgument(const Argument &a, const Graph &g) {
  Val v;
  switch (a.kind) {
  case ArgKind::None: v = Val::none(); break;
  case ArgKind::Tensor: v = Val::tensor(a.name); break;
  case ArgKind::OptionalTensor: v = a.name.empty() ? Val::none() : Val::tensor(a.name); break;
  case ArgKind::Tensors: case ArgKind::OptionalTensors: {
    std::vector<Val> l;
    for (const auto &n : a.names) l.push_back(n.empty() ? Val::none() : Val::tensor(n));
    v = Val::ofList(std::move(l));
    break;
  }
  case ArgKind::Int: v = Val::integer(SymInt::of(a.intValue)); break;
  case ArgKind::Bool: v = Val::boolean(a.intValue != 0); break;
  case ArgKind::Float: v = Val::real(a.floatValue); break;
  case ArgKind::String: v.k = Val::K::Str; v.s = a.name; break;
  case ArgKind::ScalarType: v = Val::dtype(ScalarType(a.intValue)); break;
  case ArgKind::Ints: case ArgKind::Bools: {
    std::vector<Val> l;
    for (int64_t x : a.ints) l.push_back(a.kind == ArgKind::Ints ? Val::integer(SymInt::of(x)) : Val::boolean(x));
    v = Val::ofList(std::move(l));
    break;
  }
  case ArgKind::Floats: {
    std::vector<Val> l;
    for (double x : a.floats()) l.push_back(Val::real(x));
    v = Val::ofList(std::move(l));
    break;
  }
  case ArgKind::SymInt: case ArgKind::SymInts: {
    std::vector<Val> l;
    for (const auto &s : a.syms) {
      if (!s.isName) {
        l.push_back(Val::integer(SymInt::of(s.intValue)));
        continue;
      }
      const SymInt *known = g.symIntValues.find(s.name);
      Val e = Val::integer(known ? *known : SymInt::symbol(s.name));
      e.i.setHint(std::nullopt);
      e.symName = s.name;
      l.push_back(e);
    }
    v = a.kind == ArgKind::SymInt && !l.empty() ? l[0] : Val::ofList(std::move(l));
    break;
  }
  default: v.k = Val::K::Raw; break;
  }
  v.raw = &a;
  return v;
}

/// Builds arguments of one new call, creating sym_size.int nodes for symbolic sizes.
struct ArgumentBuilder {
  Graph &graph;
  FreshNames &fresh;
  std::vector<Node> &emitted;
  std::map<std::pair<std::string, size_t>, std::string> &symCache;
  const Node *origin;
  Scope &scope;

  SymArg symbolic(const Val &v) {
    SymArg s;
    if (!v.i.isExpr) {
      s.intValue = v.i.value;
      return s;
    }
    s.isName = true;
    if (!v.symName.empty()) {
      s.name = v.symName;
      return s;
    }
    // Tensors whose sizes may provide symbols: the node's inputs, then the
    // values of the steps so far (listed only here, where a symbol needs them).
    std::vector<std::string> sources;
    for (const auto &in : origin->inputs) in.arg.collectTensorNames(sources);
    for (const auto &n : emitted)
      for (const auto &o : n.outputs) o.collectTensorNames(sources);
    for (const auto &t : sources) {
      const TensorMeta *m = graph.tensorValues.find(t);
      if (!m) continue;
      for (size_t d = 0; d < m->sizes.size(); ++d) {
        if (!symEqual(m->sizes[d], v.i)) continue;
        auto key = std::make_pair(t, d);
        auto it = symCache.find(key);
        if (it != symCache.end()) {
          s.name = it->second;
          return s;
        }
        std::string name = fresh("sym_size_int");
        Node n = makeCall(atenTarget("aten", "sym_size", "int"),
                          {positional("self", Argument::tensor(t)), positional("dim", Argument::integer(int64_t(d)))},
                          "", origin);
        Argument out;
        out.kind = ArgKind::SymInt;
        SymArg named;
        named.isName = true;
        named.name = name;
        out.syms.push_back(named);
        n.outputs = {out};
        graph.symIntValues.set(name, m->sizes[d]);
        emitted.push_back(std::move(n));
        symCache[key] = name;
        s.name = name;
        return s;
      }
    }
    scope.fail("no input tensor has the symbolic size " + v.i.expr() + " to read it from");
  }

  /// For view sizes: the one size no tensor provides may be written -1.
  bool allowInferred = false;

  Argument build(const Val &v, const SchemaType &type) {
    if (v.raw && v.k != Val::K::Raw) {
      // Unchanged arguments pass through as written (named symbols, None, lists).
      return *v.raw;
    }
    if (v.k == Val::K::Raw) return *v.raw;
    if (v.k == Val::K::None) {
      return Argument::none();
    }
    if (type.base == SchemaBaseType::Tensor) {
      if (!type.isList) {
        // A number in a Tensor position, as torch.export writes x + 1.0; scalar-to-tensor lifts it.
        if (v.k == Val::K::Float) return Argument::real(v.f);
        if (v.k == Val::K::Int && !v.i.isExpr) return Argument::integer(v.i.value);
        if (v.k == Val::K::Bool) return Argument::boolean(v.b);
        if (v.k != Val::K::Tensor) scope.fail("a tensor argument got a value that is not a tensor");
        return Argument::tensor(v.s);
      }
      if (v.k != Val::K::List) scope.fail("a tensor-list argument got a value that is not a list");
      std::vector<std::string> names;
      bool anyNone = false;
      for (const auto &e : v.list) {
        if (e.k == Val::K::None) anyNone = true;
        names.push_back(e.k == Val::K::Tensor ? e.s : "");
      }
      Argument a = Argument::tensors(names);
      if (type.elementOptional || anyNone) a.kind = ArgKind::OptionalTensors;
      return a;
    }
    bool intLike = type.base == SchemaBaseType::Int || type.base == SchemaBaseType::SymInt;
    if (intLike && type.isList) {
      if (v.k != Val::K::List) {
        if (v.k == Val::K::Int && !v.i.isExpr) return Argument::ints_({v.i.value});
        scope.fail("an int-list argument got a value that is not a list");
      }
      bool allConcrete = true;
      for (const auto &e : v.list) allConcrete = allConcrete && e.k == Val::K::Int && !e.i.isExpr && e.symName.empty();
      if (allConcrete) {
        std::vector<int64_t> ints;
        for (const auto &e : v.list) ints.push_back(e.i.value);
        return Argument::ints_(ints);
      }
      if (type.base != SchemaBaseType::SymInt) scope.fail("a symbolic size was given to a plain int[] argument");
      Argument a;
      a.kind = ArgKind::SymInts;
      bool inferred = false;
      for (const auto &e : v.list) {
        if (e.k != Val::K::Int) scope.fail("an int-list element is not an int");
        // One symbolic view size is written -1 (no sym_size read needed); others are read.
        if (allowInferred && !inferred && e.i.isExpr && e.symName.empty()) {
          inferred = true;
          SymArg minusOne;
          minusOne.intValue = -1;
          a.syms.push_back(minusOne);
          continue;
        }
        a.syms.push_back(symbolic(e));
      }
      return a;
    }
    if (intLike || type.base == SchemaBaseType::Scalar) {
      if (v.k == Val::K::Int) {
        if (!v.i.isExpr && v.symName.empty()) return Argument::integer(v.i.value);
        if (type.base == SchemaBaseType::Int) scope.fail("a symbolic size was given to a plain int argument");
        Argument a;
        a.kind = ArgKind::SymInt;
        a.syms.push_back(symbolic(v));
        return a;
      }
      if (v.k == Val::K::Bool) return type.base == SchemaBaseType::Scalar ? Argument::boolean(v.b) : Argument::integer(v.b);
      if (v.k == Val::K::Float && type.base == SchemaBaseType::Scalar) return Argument::real(v.f);
      scope.fail("an int argument got a value that is not an int");
    }
    if (type.base == SchemaBaseType::Float || type.base == SchemaBaseType::SymFloat) {
      if (type.isList) {
        Argument a;
        a.kind = ArgKind::Floats;
        for (const auto &e : v.list) a.mutableFloats().push_back(e.k == Val::K::Float ? e.f : double(e.i.value));
        return a;
      }
      if (v.k == Val::K::Float) return Argument::real(v.f);
      if (v.k == Val::K::Int && !v.i.isExpr) return Argument::real(double(v.i.value));
      scope.fail("a float argument got a value that is not a number");
    }
    if (type.base == SchemaBaseType::Bool) {
      if (v.k == Val::K::Bool) return Argument::boolean(v.b);
      if (v.k == Val::K::Int && !v.i.isExpr) return Argument::boolean(v.i.value != 0);
      scope.fail("a bool argument got a value that is not a bool");
    }
    if (type.base == SchemaBaseType::ScalarType) {
      if (v.k != Val::K::Dtype) scope.fail("a dtype argument got a value that is not a dtype");
      return Argument::scalarType(v.dt);
    }
    if (type.base == SchemaBaseType::Str) {
      if (v.k != Val::K::Str) scope.fail("a str argument got a value that is not a string");
      return Argument::string(v.s);
    }
    scope.fail("cannot build an argument of type " + type.str() + " from an expression");
  }
};

std::string yamlExprText(const YAML::Node &n) {
  if (n.IsScalar()) return n.Scalar();
  if (n.IsNull()) return "none";
  if (n.IsSequence()) {
    std::string s = "[";
    for (size_t i = 0; i < n.size(); ++i) s += (i ? ", " : "") + yamlExprText(n[i]);
    return s + "]";
  }
  throw Error("expected an expression, got a map", {}, "line " + std::to_string(n.Mark().line + 1));
}

} // namespace

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

DecompositionRules::DecompositionRules() = default;
DecompositionRules::~DecompositionRules() = default;
DecompositionRules::DecompositionRules(DecompositionRules &&) noexcept = default;
DecompositionRules &DecompositionRules::operator=(DecompositionRules &&) noexcept = default;

DecompositionRules DecompositionRules::parse(const std::string &text, const std::string &sourceName) {
  return parse(text, sourceName, false);
}

DecompositionRules DecompositionRules::parseRewriteRules(const std::string &text, const std::string &sourceName) {
  return parse(text, sourceName, true);
}

// A function-try-block: yaml-cpp throws from any subscript or conversion of a
// node of the wrong kind; those become errors on the node's line.
DecompositionRules DecompositionRules::parse(const std::string &text, const std::string &sourceName,
                                             bool rewriteRules) try {
  const OperatorTable &table = OperatorTable::builtin();
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception &e) {
    throw Error("invalid YAML: " + e.msg, sourceName, "line " + std::to_string(e.mark.line + 1));
  }
  DecompositionRules rules;
  if (root.IsNull()) return rules;
  if (!root.IsSequence()) throw Error("decomposition rules must be a YAML list", sourceName);
  for (const auto &r : root) {
    std::string line = "line " + std::to_string(r.Mark().line + 1);
    auto fail = [&](const std::string &why) -> Error { return Error(why, sourceName, line); };
    if (rewriteRules && r.IsMap() && r["replace"]) continue;
    if (!r.IsMap() || !r["match"]) throw fail("a rule needs 'match: ns::op.overload'");
    if (!r["match"].IsScalar()) throw fail("'match' must be an operator name like aten::add.Tensor");
    auto rule = std::make_shared<Rule>();
    rule->where = sourceName + ":" + std::to_string(r.Mark().line + 1);
    rule->match = OperatorTable::normalizeName(r["match"].Scalar());
    if (!table.lookup(rule->match)) throw fail("rule matches " + rule->match + ", which the operator table does not know");
    for (auto it = r.begin(); it != r.end(); ++it) {
      std::string key = it->first.Scalar();
      if (key != "match" && key != "when" && key != "steps" && key != "returns" && key != "refuse" && key != "doc")
        throw fail("unknown key '" + key + "' (match, when, steps, returns, refuse, doc)");
    }
    if (r["when"]) rule->when = compileExpr(yamlExprText(r["when"]));
    if (r["steps"]) {
      if (!r["steps"].IsSequence()) throw fail("'steps' must be a list");
      for (const auto &s : r["steps"]) {
        Step step;
        std::map<std::string, StepMeta> metas; // by output name
        if (!s.IsMap() || !s["call"].IsScalar())
          throw Error("a step is a mapping with 'call: ns::op.overload'", sourceName,
                      "line " + std::to_string(s.Mark().line + 1));
        if (s["args"] && !s["args"].IsMap())
          throw Error("'args' must be a mapping of argument name to value", sourceName,
                      "line " + std::to_string(s["args"].Mark().line + 1));
        if (!s["call"]) throw Error("a step needs 'call: ns::op.overload'", sourceName, "line " + std::to_string(s.Mark().line + 1));
        step.op = OperatorTable::normalizeName(s["call"].Scalar());
        const OpSchema *schema = table.lookup(step.op);
        if (!schema)
          throw Error("step calls " + step.op + ", which the operator table does not know", sourceName,
                      "line " + std::to_string(s.Mark().line + 1));
        step.schema = schema;
        step.target = atenTarget(schema->ns, schema->name, schema->overload.empty() ? "default" : schema->overload);
        step.allowInferred = schema->name == "view" || schema->name == "view_copy" || schema->name == "reshape";
        if (s["args"])
          for (auto a = s["args"].begin(); a != s["args"].end(); ++a) {
            std::string name = a->first.Scalar();
            if (!schema->argument(name))
              throw Error(step.op + " has no argument '" + name + "'", sourceName,
                          "line " + std::to_string(a->first.Mark().line + 1));
            const SchemaArgument *param = schema->argument(name);
            step.args.push_back(StepArg{name, compileExpr(yamlExprText(a->second)), param,
                                        size_t(schema->argumentIndex(name))});
          }
        for (const auto &req : schema->arguments)
          if (!req.defaultValue && !req.isOut && !(req.type.optional && req.kwargOnly)) {
            bool given = false;
            for (const auto &a : step.args) given = given || a.name == req.name;
            if (!given)
              throw Error("step calling " + step.op + " does not pass the required argument '" + req.name + "'",
                          sourceName, "line " + std::to_string(s.Mark().line + 1));
          }
        if (s["out"]) {
          auto add = [&](std::string name) {
            StepOutput o;
            o.reuse = name.compare(0, 3, "out") == 0 && name.find_first_not_of("0123456789", 3) == std::string::npos;
            o.id = internName(name);
            o.name = std::move(name);
            step.outputs.push_back(std::move(o));
          };
          if (s["out"].IsSequence())
            for (const auto &o : s["out"]) add(o.Scalar());
          else
            add(s["out"].Scalar());
        }
        if (step.outputs.empty()) throw Error("a step needs 'out: NAME' (or a list)", sourceName, "line " + std::to_string(s.Mark().line + 1));
        if (s["meta"] && !s["meta"].IsMap())
          throw Error("'meta' must be a mapping (value name: like, dtype, sizes)", sourceName,
                      "line " + std::to_string(s["meta"].Mark().line + 1));
        if (s["meta"])
          for (auto m = s["meta"].begin(); m != s["meta"].end(); ++m) {
            StepMeta meta;
            if (m->second.IsMap()) {
              if (m->second["like"]) meta.like = compileExpr(yamlExprText(m->second["like"]));
              if (m->second["dtype"]) meta.dtype = compileExpr(yamlExprText(m->second["dtype"]));
              if (m->second["sizes"]) meta.sizes = compileExpr(yamlExprText(m->second["sizes"]));
            } else {
              meta.like = compileExpr(yamlExprText(m->second));
            }
            metas[m->first.Scalar()] = std::move(meta);
          }
        // Meta entries naming no output of the step are never read.
        for (auto &o : step.outputs)
          if (auto m = metas.find(o.name); m != metas.end()) o.meta = m->second;
        rule->steps.push_back(std::move(step));
      }
    }
    if (r["returns"]) {
      if (r["returns"].IsSequence())
        for (const auto &o : r["returns"]) rule->returns.push_back(compileExpr(yamlExprText(o)));
      else
        rule->returns.push_back(compileExpr(yamlExprText(r["returns"])));
    }
    if (r["refuse"]) {
      if (!r["refuse"].IsScalar() || r["refuse"].Scalar().empty())
        throw fail("'refuse' must be the message saying what is not supported");
      if (!rule->steps.empty() || !rule->returns.empty()) throw fail("a rule that refuses has no 'steps' or 'returns'");
      rule->refusal = r["refuse"].Scalar();
    }
    if (rule->steps.empty() && rule->returns.empty() && rule->refusal.empty())
      throw fail("a rule needs 'steps', 'returns' or 'refuse'");
    auto slot = std::make_shared<Slot>();
    slot->match = rule->match;
    slot->rule = std::move(rule);
    rules.rules_.push_back(std::move(slot));
  }
  return rules;
} catch (const YAML::Exception &e) {
  throw Error("invalid rule: " + e.msg, sourceName, e.mark.is_null() ? "" : "line " + std::to_string(e.mark.line + 1));
}

const DecompositionRules::Rule &DecompositionRules::Slot::get() const {
  // Rules load on one thread at a time (see nameIds); the lock keeps a slot
  // from being parsed twice all the same.
  static std::mutex parsing;
  std::lock_guard<std::mutex> lock(parsing);
  if (!rule) {
    DecompositionRules one = parse(text, sourceName, false);
    if (one.rules_.size() != 1 || one.rules_[0]->match != match)
      throw InternalError("decomposition rule at " + sourceName + " for " + match + " did not parse to one rule for it");
    rule = one.rules_[0]->rule;
  }
  return *rule;
}

// The rules of a file, each kept as its text until its op is first needed.
// A rule starts at a line "- match: ns::op" in column 0 and runs to the next
// line that starts with "- "; a rule written otherwise is parsed at once.
DecompositionRules DecompositionRules::parseLazily(const std::string &text, const std::string &sourceName) {
  DecompositionRules rules;
  std::vector<std::pair<size_t, size_t>> starts; // (offset, line) of each "- " line
  size_t line = 1;
  for (size_t pos = 0; pos < text.size(); ++line) {
    if (text.compare(pos, 2, "- ") == 0) starts.push_back({pos, line});
    size_t eol = text.find('\n', pos);
    pos = eol == std::string::npos ? text.size() : eol + 1;
  }
  for (size_t k = 0; k < starts.size(); ++k) {
    auto [begin, firstLine] = starts[k];
    size_t end = k + 1 < starts.size() ? starts[k + 1].first : text.size();
    std::string chunk = std::string(firstLine - 1, '\n') + text.substr(begin, end - begin);
    std::string head = text.substr(begin, text.find('\n', begin) - begin);
    static const std::string kMatch = "- match: ";
    std::string op;
    if (head.compare(0, kMatch.size(), kMatch) == 0) {
      op = head.substr(kMatch.size());
      if (auto hash = op.find(" #"); hash != std::string::npos) op.resize(hash);
      while (!op.empty() && op.back() == ' ') op.pop_back();
      if (op.find_first_of(" {}[]'\"&*!|>%@`,") != std::string::npos) op.clear();
    }
    if (op.empty()) { // written some other way: parsed now
      DecompositionRules now = parse(chunk, sourceName, false);
      rules.rules_.insert(rules.rules_.end(), now.rules_.begin(), now.rules_.end());
      continue;
    }
    auto slot = std::make_shared<Slot>();
    slot->match = OperatorTable::normalizeName(op);
    slot->text = std::move(chunk);
    slot->sourceName = sourceName;
    rules.rules_.push_back(std::move(slot));
  }
  return rules;
}

size_t DecompositionRules::parseAll() const {
  for (const auto &slot : rules_) slot->get();
  return rules_.size();
}

DecompositionRules DecompositionRules::loadFile(const std::string &path) {
  return parse(readFileOrStdin(path), path);
}

const DecompositionRules &DecompositionRules::builtin() {
  static const DecompositionRules rules =
      parseLazily(std::string(embedded::builtinDecompositionsText()), "lib/Edge/decompositions.yaml");
  return rules;
}

void DecompositionRules::prepend(const DecompositionRules &other) {
  rules_.insert(rules_.begin(), other.rules_.begin(), other.rules_.end());
}

size_t DecompositionRules::size() const { return rules_.size(); }

std::vector<std::string> DecompositionRules::describe(const std::string &qualifiedName) const {
  std::vector<std::string> lines;
  std::string key = OperatorTable::normalizeName(qualifiedName);
  for (const auto &slot : rules_) {
    if (slot->match != key) continue;
    const Rule *r = &slot->get();
    std::string calls;
    for (const auto &step : r->steps)
      if (calls.find(step.op) == std::string::npos) calls += (calls.empty() ? "" : ", ") + step.op;
    std::string result = !r->refusal.empty() ? "refused: " + r->refusal
                         : calls.empty()         ? "its arguments (no call)"
                                                 : calls;
    lines.push_back(r->where + ": " + (r->when.empty() ? "" : "when " + r->when.text + " ") + "-> " + result);
  }
  return lines;
}

std::vector<std::string> DecompositionRules::matchedOps() const {
  std::vector<std::string> ops;
  for (const auto &slot : rules_) ops.push_back(slot->match);
  return ops;
}

//===----------------------------------------------------------------------===//
// Instantiation
//===----------------------------------------------------------------------===//

namespace {

struct Expander {
  Graph &graph;
  FreshNames fresh;
  /// The rules of an op, parsed when a node first needs them.
  struct OpRules {
    std::vector<const DecompositionRules::Slot *> slots;
    std::vector<const DecompositionRules::Rule *> rules;
    bool parsed = false;
  };
  std::unordered_map<std::string, OpRules> &byOp;
  std::map<std::pair<std::string, size_t>, std::string> symCache;
  StringMap<std::string> renamed; // removed value -> replacement
  size_t rewrites = 0;
  // One scope for every node (its slots keep their capacity): bound afresh per node.
  Scope scope{graph, {}, {}, {}};
  // Interned rather than looked up: a rule parsed later may read them.
  std::vector<int> outIds; // name ids of out0, out1, ...
  int outListId = internName("out");

  Expander(Graph &g, std::unordered_map<std::string, OpRules> &rules) : graph(g), fresh(g), byOp(rules) {}

  void renameInputs(Node &node) {
    if (renamed.empty()) return;
    auto fix = [&](std::string &s) {
      auto it = renamed.find(s);
      if (it != renamed.end()) s = it->second;
    };
    for (auto &in : node.inputs) {
      Argument &a = in.arg;
      if (a.kind == ArgKind::Tensor || a.kind == ArgKind::OptionalTensor) fix(a.name);
      if (a.kind == ArgKind::Tensors || a.kind == ArgKind::OptionalTensors)
        for (auto &n : a.names) fix(n);
    }
  }

  /// The rules for a target string, with what binding a node needs of its
  /// schema, looked up once per distinct target: a graph has few distinct
  /// targets and many nodes.
  struct Candidates {
    const std::vector<const DecompositionRules::Rule *> *rules = nullptr;
    const OpSchema *schema = nullptr;
    std::vector<int> ids;                        // per schema argument: its name id (-1: no rule reads it)
    std::vector<std::optional<Argument>> defaults; // per schema argument: its default, when it has one
    std::vector<std::optional<Error>> badDefaults; // per schema argument: why its default does not convert
  };
  StringMap<Candidates> byTarget;
  const Candidates &candidates(const std::string &target) {
    auto [slot, inserted] = byTarget.try_emplace(target);
    if (!inserted) return slot->second;
    OpTarget t = parseTarget(target);
    if (t.dialect != TargetDialect::Aten) return slot->second;
    auto it = byOp.find(OperatorTable::normalizeName(t.qualifiedName()));
    if (it == byOp.end()) return slot->second;
    const OpSchema *schema = OperatorTable::builtin().lookup(t.qualifiedName());
    if (!schema) return slot->second;
    OpRules &op = it->second;
    if (!op.parsed) { // before the argument ids below: parsing numbers the names the rules read
      for (const auto *s : op.slots) op.rules.push_back(&s->get());
      op.parsed = true;
    }
    Candidates &c = slot->second;
    c.rules = &op.rules;
    c.schema = schema;
    for (const auto &a : schema->arguments) {
      c.ids.push_back(nameId(a.name));
      c.defaults.emplace_back();
      c.badDefaults.emplace_back();
      if (!a.defaultValue) continue;
      try {
        c.defaults.back() = defaultToArgument(a);
      } catch (const Error &e) {
        c.badDefaults.back() = e; // thrown for a node that leaves the argument out, as it was
      }
    }
    return c;
  }

  /// The rule's replacement for `node`, or nullopt when no rule applies.
  std::optional<std::vector<Node>> expand(Node &node) {
    const Candidates &c = candidates(node.target);
    if (!c.rules) return std::nullopt;
    const DecompositionRules::Rule *rule = nullptr;
    scope.where = [&rule, &node] {
      std::string frame = userFrame(node);
      return rule->where + " (rule for " + rule->match + ", node " + node.displayName() +
             (frame.empty() ? "" : " at " + frame) + ")";
    };
    bool bound = false;
    for (const auto *r : *c.rules) {
      rule = r;
      // The node's values, the same for each of its rules (a rule binds new ones only once it applies).
      if (!bound) bind(node, c);
      bound = true;
      if (!rule->when.empty()) {
        Val cond = evaluate(rule->when, scope);
        bool holds = cond.k == Val::K::Bool ? cond.b : cond.k != Val::K::None;
        if (!holds) continue;
      }
      if (!rule->refusal.empty()) scope.fail(rule->refusal);
      return instantiate(*rule, node);
    }
    return std::nullopt;
  }

  int outId(size_t k) {
    while (outIds.size() <= k) outIds.push_back(internName("out" + std::to_string(outIds.size())));
    return outIds[k];
  }

  void bind(const Node &node, const Candidates &c) {
    scope.clear();
    const OpSchema &schema = *c.schema;
    size_t next = 0; // torch.export writes arguments in schema order: try the next one first
    for (size_t i = 0; i < schema.arguments.size(); ++i) {
      const auto &a = schema.arguments[i];
      const Argument *given = nullptr;
      if (next < node.inputs.size() && node.inputs[next].name == a.name) {
        given = &node.inputs[next++].arg;
      } else if (const NamedArgument *in = node.input(a.name)) {
        given = &in->arg;
      }
      if (!given && !a.defaultValue) {
        if (c.ids[i] >= 0) scope.set(c.ids[i], Val::none());
        continue;
      }
      if (!given && c.badDefaults[i]) throw *c.badDefaults[i];
      if (c.ids[i] < 0) continue;
      scope.set(c.ids[i], fromArgument(given ? *given : *c.defaults[i], graph));
    }
    std::vector<std::string> outs;
    for (const auto &o : node.outputs) o.collectTensorNames(outs);
    for (size_t k = 0; k < outs.size(); ++k)
      if (int id = outId(k); id >= 0) scope.set(id, Val::tensor(outs[k]));
    if (outListId < 0) return;
    if (node.outputs.size() == 1 && node.outputs[0].kind == ArgKind::Tensors) {
      std::vector<Val> l;
      for (const auto &n : outs) l.push_back(Val::tensor(n));
      scope.set(outListId, Val::ofList(std::move(l)));
    } else if (!outs.empty()) {
      scope.set(outListId, Val::tensor(outs[0]));
    }
  }

  std::vector<Node> instantiate(const DecompositionRules::Rule &rule, Node &node) {
    std::vector<Node> emitted;
    // The last step's call takes the matched node's metadata once nothing can
    // fail any more (the node is dropped then): one copy fewer per rewrite.
    size_t lastCall = SIZE_MAX;
    emitted.reserve(rule.steps.size());
    std::vector<Val> values;
    std::vector<size_t> order; // per built argument: its schema index
    for (const auto &step : rule.steps) {
      ArgumentBuilder builder{graph, fresh, emitted, symCache, &node, scope};
      builder.allowInferred = step.allowInferred;
      values.clear();
      values.reserve(step.args.size()); // v below stays valid
      order.clear();
      // Each argument is built where it stays (an Argument is 328 bytes:
      // building it elsewhere and moving it into place cost four moves).
      std::vector<NamedArgument> inputs;
      inputs.reserve(step.args.size());
      std::string firstTensor;
      for (const auto &sa : step.args) {
        const SchemaArgument *param = sa.param;
        values.push_back(evaluate(sa.expr, scope));
        const Val &v = values.back();
        // Left at its default, as torch.export writes calls: a None for an argument
        // defaulting to None, or a None standing for "the default".
        if (v.k == Val::K::None && param->defaultValue &&
            (!param->type.optional || param->defaultValue->kind == SchemaDefault::Kind::None))
          continue;
        NamedArgument &in = inputs.emplace_back();
        in.name = sa.name;
        in.arg = builder.build(v, param->type);
        in.kind = param->kwargOnly ? ArgumentPassing::Keyword : ArgumentPassing::Positional;
        if (firstTensor.empty() && in.arg.kind == ArgKind::Tensor) firstTensor = in.arg.name;
        order.push_back(sa.index);
      }
      // Schema order, as torch.export writes arguments: a stable insertion sort
      // (a handful of arguments, most often in order already).
      for (size_t k = 1; k < inputs.size(); ++k)
        for (size_t j = k; j > 0 && order[j] < order[j - 1]; --j) {
          std::swap(order[j], order[j - 1]);
          std::swap(inputs[j], inputs[j - 1]);
        }
      bool last = &step == &rule.steps.back();
      Node call = makeCall(step.target, std::move(inputs), "", last ? nullptr : &node);
      call.outputs.clear();
      for (const auto &out : step.outputs) {
        if (out.reuse) {
          const Val *bound = scope.find(out.id);
          if (!bound) scope.fail("the matched node has no output '" + out.name + "'");
          if (bound->k == Val::K::List) {
            call.outputs.push_back(node.outputs.at(0));
          } else {
            call.outputs.push_back(Argument::tensor(bound->s));
          }
          continue;
        }
        TensorMeta meta = newMeta(step, out, values, firstTensor);
        std::string name = fresh(out.name);
        graph.tensorValues.set(name, std::move(meta));
        scope.set(out.id, Val::tensor(name));
        call.outputs.push_back(Argument::tensor(std::move(name)));
      }
      if (last) lastCall = emitted.size();
      emitted.push_back(std::move(call));
    }
    // returns: the matched node's outputs become these values.
    if (!rule.returns.empty()) {
      std::vector<std::string> outs;
      for (const auto &o : node.outputs) o.collectTensorNames(outs);
      for (size_t k = 0; k < rule.returns.size(); ++k) {
        if (k >= outs.size()) scope.fail("more returns than the node has outputs");
        Val v = evaluate(rule.returns[k], scope);
        if (v.k != Val::K::Tensor) scope.fail("a return is not a tensor");
        if (v.s == outs[k]) continue;
        renamed[outs[k]] = v.s;
      }
    }
    if (lastCall != SIZE_MAX) {
      Node &call = emitted[lastCall];
      moveCallMetadata(node, call);
      call.isHopSingleTensorReturn = node.isHopSingleTensorReturn;
    }
    ++rewrites;
    return emitted;
  }

  /// The value a step passed for argument `name`, or null (the last one, as a map of them kept).
  static const Val *valueOf(const Step &step, const std::vector<Val> &values, const char *name) {
    for (size_t k = values.size(); k-- > 0;)
      if (step.args[k].name == name) return &values[k];
    return nullptr;
  }

  /// Output sizes of the few shape-changing ops rules use, when the rule gives none.
  std::optional<std::vector<SymInt>> inferredSizes(const Step &step, const std::vector<Val> &values) {
    const OpSchema &schema = *step.schema;
    auto listOf = [](const Val &v) {
      std::vector<SymInt> out;
      for (const auto &e : v.list) out.push_back(e.i);
      return out;
    };
    auto tensorSizes = [&](const char *arg) -> const std::vector<SymInt> * {
      const Val *v = valueOf(step, values, arg);
      if (!v || v->k != Val::K::Tensor) return nullptr;
      return &metaOf(graph, v->s).sizes;
    };
    const std::string &n = schema.name;
    if (n == "view" || n == "view_copy" || n == "_unsafe_view" || n == "reshape" || n == "expand" || n == "full") {
      const Val *v = valueOf(step, values, n == "reshape" ? "shape" : "size");
      if (v && v->k == Val::K::List) return listOf(*v);
    }
    if (n == "permute" || n == "permute_copy") {
      const std::vector<SymInt> *self = tensorSizes("self");
      const Val *dims = valueOf(step, values, "dims");
      if (!self || !dims) return std::nullopt;
      std::vector<SymInt> out;
      for (const auto &d : dims->list) {
        int64_t k = d.i.value < 0 ? d.i.value + int64_t(self->size()) : d.i.value;
        out.push_back(self->at(size_t(k)));
      }
      return out;
    }
    if (n == "bmm" || n == "mm") {
      const std::vector<SymInt> *a = tensorSizes("self"), *b = tensorSizes("mat2");
      if (!a || !b || a->empty() || b->empty()) return std::nullopt;
      std::vector<SymInt> out(a->begin(), a->end() - 1);
      out.push_back(b->back());
      return out;
    }
    return std::nullopt;
  }

  TensorMeta newMeta(const Step &step, const StepOutput &out, const std::vector<Val> &values,
                     const std::string &firstTensor) {
    const std::optional<StepMeta> &given = out.meta;
    const TensorMeta *base = nullptr;
    static const TensorMeta none;
    if (given && !given->like.empty()) {
      Val v = evaluate(given->like, scope);
      if (v.k != Val::K::Tensor) scope.fail("meta 'like' of '" + out.name + "' is not a tensor");
      base = &metaOf(graph, v.s);
    } else if (!firstTensor.empty()) {
      base = &metaOf(graph, firstTensor);
    } else if (!given) {
      scope.fail("output '" + out.name + "' needs a meta entry (its step has no tensor argument)");
    } else {
      base = &none;
    }
    ScalarType dtype = base->dtype;
    std::optional<std::vector<SymInt>> sizes = inferredSizes(step, values);
    if (given) {
      if (!given->dtype.empty()) {
        Val d = evaluate(given->dtype, scope);
        if (d.k != Val::K::Dtype) scope.fail("meta dtype of '" + out.name + "' is not a dtype");
        dtype = d.dt;
      }
      if (!given->sizes.empty()) {
        Val s = evaluate(given->sizes, scope);
        if (s.k != Val::K::List) scope.fail("meta sizes of '" + out.name + "' is not a list");
        sizes.emplace();
        for (const auto &e : s.list) {
          if (e.k != Val::K::Int) scope.fail("meta sizes of '" + out.name + "' holds a value that is not an int");
          SymInt size = e.i;
          size.setHint(std::nullopt);
          sizes->push_back(size);
        }
      }
    }
    return makeMeta(dtype, sizes ? *sizes : base->sizes, base->device);
  }
};

} // namespace

size_t DecompositionRules::run(Graph &graph, const std::vector<std::string> &keep) const {
  std::unordered_map<std::string, Expander::OpRules> byOp;
  for (const auto &slot : rules_) byOp[slot->match].slots.push_back(slot.get());
  for (const auto &k : keep) byOp.erase(OperatorTable::normalizeName(k));
  Expander ex(graph, byOp);
  if (std::none_of(graph.nodes.begin(), graph.nodes.end(),
                   [&](const Node &n) { return ex.candidates(n.target).rules != nullptr; }))
    return 0; // nothing to decompose: the node list stays where it is
  std::vector<Node> old = std::move(graph.nodes);
  graph.nodes.clear();
  // Room for the expansions, so that the nodes are not moved again when the
  // list grows (the pages of unused room are never touched).
  graph.nodes.reserve(2 * old.size());
  // Depth-first: a rule's steps may match rules themselves; depth bounds cycles.
  struct Item {
    Node node;
    int depth;
  };
  std::vector<Item> stack;
  for (Node &original : old) {
    stack.push_back({std::move(original), 0});
    while (!stack.empty()) {
      Item item = std::move(stack.back());
      stack.pop_back();
      ex.renameInputs(item.node);
      auto replacement = ex.expand(item.node);
      if (!replacement) {
        graph.nodes.push_back(std::move(item.node));
        continue;
      }
      if (item.depth > 16)
        throw Error("decomposition rules for " + targetOf(item.node).qualifiedName() + " expand without end", {},
                    "node " + item.node.displayName());
      for (size_t k = replacement->size(); k-- > 0;) stack.push_back({std::move((*replacement)[k]), item.depth + 1});
    }
  }
  auto fix = [&](Argument &a) {
    if (a.kind == ArgKind::Tensor) {
      auto it = ex.renamed.find(a.name);
      if (it != ex.renamed.end()) a.name = it->second;
    }
    if (a.kind == ArgKind::Tensors)
      for (auto &n : a.names)
        if (auto it = ex.renamed.find(n); it != ex.renamed.end()) n = it->second;
  };
  for (auto &o : graph.outputs) fix(o);
  if (!ex.renamed.empty()) { // one rebuild rather than an O(n) erase per value
    OrderedMap<TensorMeta> kept;
    kept.reserve(graph.tensorValues.size());
    for (auto &[name, meta] : graph.tensorValues)
      if (!ex.renamed.count(name)) kept.set(name, std::move(meta));
    graph.tensorValues = std::move(kept);
  }
  return ex.rewrites;
}

void decomposeWithRules(Program &program, const DecompositionRules &rules, const std::vector<std::string> &keep) {
  for (auto &[name, method] : program.methods) {
    ExportedProgram &ep = method.program;
    // Renames of graph outputs must reach the signature too.
    std::vector<Argument> before = ep.graph.outputs;
    rules.run(ep.graph, keep);
    for (size_t i = 0; i < before.size() && i < ep.graph.outputs.size(); ++i)
      if (!(before[i] == ep.graph.outputs[i]))
        for (auto &spec : ep.signature.outputSpecs)
          if (spec.arg == before[i]) spec.arg = ep.graph.outputs[i];
    // Nested graphs (cond branches) hold ATen ops too.
    for (Node &n : ep.graph.nodes)
      for (auto &in : n.inputs)
        if (in.arg.kind == ArgKind::Graph && in.arg.graph()) rules.run(*in.arg.graph(), keep);
  }
}

} // namespace exir::edge
