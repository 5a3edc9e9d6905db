//===- Plan/SymbolicBounds.cpp - upper bounds of symbolic sizes -----------===//
//
// Dynamic shapes are planned at their upper bounds (Basic with Dim 1..10 plans
// for 10). Sizes are sympy expressions (srepr since torch 2.6, plain str before);
// sizes only grow with their symbols, so the bound of Add/Mul is the sum/product
// of the operands' bounds and FloorDiv(a, b) is bound(a) / lower(b).
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanPasses.h"
#include "Support/Error.h"

#include <cctype>
#include <stdexcept>

namespace exir::plan {

namespace {
/// torch names data-dependent (unbacked) sizes u0, u1, ...
bool isUnbackedSymbol(const std::string &name) {
  return name.size() > 1 && name[0] == 'u' && name.find_first_not_of("0123456789", 1) == std::string::npos;
}

/// The symbol a size is, when it is a bare symbol ("u0" or "Symbol('u0', integer=True)").
std::optional<std::string> bareSymbol(const SymInt &size) {
  if (!size.isExpr) return std::nullopt;
  const std::string &e = size.expr();
  if (e.rfind("Symbol(", 0) == 0) {
    auto q = e.find_first_of("'\"");
    if (q == std::string::npos) return std::nullopt;
    auto end = e.find(e[q], q + 1);
    if (end == std::string::npos) return std::nullopt;
    return e.substr(q + 1, end - q - 1);
  }
  if (e.find_first_of("()+*/ ") == std::string::npos) return e;
  return std::nullopt;
}

struct BoundParser {
  const std::string &text;
  const ExportedProgram &ep;
  size_t pos = 0;

  void skip() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  }
  [[noreturn]] void fail(const std::string &why) {
    throw Error("cannot bound symbolic size '" + text + "': " + why);
  }
  std::string identifier() {
    skip();
    size_t start = pos;
    while (pos < text.size() && (std::isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_')) ++pos;
    return text.substr(start, pos - start);
  }
  int64_t symbolBound(const std::string &name, bool upper) {
    const RangeConstraint *r = ep.rangeConstraints.find(name);
    const std::optional<int64_t> *v = r ? (upper ? &r->maxVal : &r->minVal) : nullptr;
    if (v && *v) return **v;
    if (!upper) return 0; // sizes are never negative
    if (isUnbackedSymbol(name))
      fail("unbacked symbol '" + name + "' (a data-dependent size) has no upper bound; bound it in the model " +
           "before export, e.g. torch._check(n <= MAX)");
    if (!r) fail("symbol '" + name + "' has no range constraint");
    fail("symbol '" + name + "' has no upper bound (unbounded dynamic dim)");
  }
  // Parses one expression and returns its (lower, upper) bounds.
  std::pair<int64_t, int64_t> expr() {
    skip();
    if (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '-')) {
      size_t start = pos++;
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
      int64_t v = 0;
      try {
        v = std::stoll(text.substr(start, pos - start));
      } catch (const std::exception &) {
        fail("integer out of range at " + std::to_string(start));
      }
      return {v, v};
    }
    std::string name = identifier();
    if (name.empty()) fail("unexpected character at " + std::to_string(pos));
    skip();
    if (pos >= text.size() || text[pos] != '(') { // plain str() form: a bare symbol
      int64_t lo = symbolBound(name, false), hi = symbolBound(name, true);
      return {lo, hi};
    }
    ++pos; // '('
    if (name == "Symbol") {
      skip();
      char quote = text[pos++];
      size_t end = text.find(quote, pos);
      std::string sym = text.substr(pos, end - pos);
      pos = text.find(')', end);
      if (pos == std::string::npos) fail("unterminated Symbol(...)");
      ++pos;
      return {symbolBound(sym, false), symbolBound(sym, true)};
    }
    if (name == "Integer") {
      auto v = expr();
      expect(')');
      return v;
    }
    std::vector<std::pair<int64_t, int64_t>> args;
    for (;;) {
      args.push_back(expr());
      skip();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      expect(')');
      break;
    }
    if (name == "Add") {
      std::pair<int64_t, int64_t> r{0, 0};
      for (auto &a : args) r = {checked(r.first, a.first, false), checked(r.second, a.second, false)};
      return r;
    }
    if (name == "Mul") {
      std::pair<int64_t, int64_t> r{1, 1};
      for (auto &a : args) r = {checked(r.first, a.first, true), checked(r.second, a.second, true)};
      return r;
    }
    if ((name == "FloorDiv" || name == "CleanDiv") && args.size() == 2) {
      if (args[1].first <= 0) fail("division by a value that may be 0");
      return {args[0].first / args[1].second, args[0].second / args[1].first};
    }
    if (name == "Max" && !args.empty()) {
      std::pair<int64_t, int64_t> r = args[0];
      for (auto &a : args) r = {std::max(r.first, a.first), std::max(r.second, a.second)};
      return r;
    }
    if (name == "Min" && !args.empty()) {
      std::pair<int64_t, int64_t> r = args[0];
      for (auto &a : args) r = {std::min(r.first, a.first), std::min(r.second, a.second)};
      return r;
    }
    fail("unsupported function '" + name + "'");
  }
  // Bounds near int64's limits must not wrap around into small sizes.
  int64_t checked(int64_t a, int64_t b, bool multiply) {
    int64_t r = 0;
    if (multiply ? __builtin_mul_overflow(a, b, &r) : __builtin_add_overflow(a, b, &r))
      fail("its bound overflows int64");
    return r;
  }
  void expect(char c) {
    skip();
    if (pos >= text.size() || text[pos] != c) fail(std::string("expected '") + c + "'");
    ++pos;
  }
};
} // namespace

int64_t upperBound(const SymInt &size, const ExportedProgram &ep) {
  if (!size.isExpr) return size.value;
  BoundParser parser{size.expr(), ep};
  return parser.expr().second;
}

void boundDataDependentSizes(Program &program) {
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    auto visit = [&](Graph &g, const std::string &) {
      for (const Node &node : g.nodes) {
        OpTarget t = parseTarget(node.target);
        if (t.ns != "aten" || t.name != "nonzero" || node.inputs.empty() || node.outputs.empty() ||
            node.inputs[0].arg.kind != ArgKind::Tensor || node.outputs[0].kind != ArgKind::Tensor)
          continue;
        const TensorMeta *in = g.tensorValues.find(node.inputs[0].arg.name);
        const TensorMeta *out = g.tensorValues.find(node.outputs[0].name);
        if (!in || !out || out->sizes.empty()) continue;
        auto sym = bareSymbol(out->sizes[0]);
        if (!sym || !isUnbackedSymbol(*sym)) continue;
        RangeConstraint *r = ep.rangeConstraints.find(*sym);
        if (r && r->maxVal) continue;
        // nonzero of N elements has at most N rows.
        int64_t rows = 1;
        for (const auto &s : in->sizes) rows *= upperBound(s, ep);
        RangeConstraint bound = r ? *r : RangeConstraint{};
        if (!bound.minVal) bound.minVal = 0;
        bound.maxVal = rows;
        ep.rangeConstraints.set(*sym, bound);
      }
    };
    visit(ep.graph, "");
    forEachSubgraph(ep.graph, visit);
  }
}

} // namespace exir::plan
