//===- Edge/DecomposeEinsum.cpp - einsum -> permute, sum and bmm ----------===//
//
// aten::einsum is CompositeImplicit: torch.export keeps it in training IR and
// core ATen has no form of it. As ATen contracts, operands are taken left to
// right: letters no later operand nor the output needs are summed out first,
// then each pair is permuted to [batch, kept, contracted] x [batch,
// contracted, kept], reshaped to one bmm and reshaped back; the result is
// permuted into the output's order. An ellipsis stands for the leading dims,
// aligned from the right and broadcast as torch does. With a symbolic size
// (dynamic shapes) the operands are multiplied, broadcast over every letter,
// and summed instead: no views, so no sizes computed at run time. A letter
// repeated within one operand (a diagonal) is refused.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Support/CheckedMath.h"
#include "Support/Error.h"
#include "Support/Strings.h"

#include <algorithm>
#include <map>

namespace exir::edge {

namespace {

/// One operand (or the result) during the contraction: its value and the
/// letter of each dim. Ellipsis dims are the characters '0', '1', ... counted
/// from the right, so that they line up across operands.
struct Term {
  std::string value;
  std::string letters;
};

class EinsumLowering {
public:
  EinsumLowering(Graph &graph, const Node &node)
      : node_(node), emit_(graph, node, "einsum: a size is symbolic where the bmm path needs it static", "einsum_") {}

  std::vector<Node> run() {
    const Argument &equation = requireArg(node_, "equation");
    const Argument &tensors = requireArg(node_, "tensors");
    if (equation.kind != ArgKind::String) fail("its equation must be a string");
    if (tensors.kind != ArgKind::Tensors || tensors.names.empty()) fail("its tensors must be a list of tensors");
    const std::string result = node_.outputs.at(0).name;

    std::string text;
    for (char c : equation.name)
      if (c != ' ') text += c;
    size_t arrow = text.find("->");
    std::vector<std::string> specs = splitFields(std::string_view(text).substr(0, arrow), ',');
    if (specs.size() != tensors.names.size())
      fail("its equation names " + std::to_string(specs.size()) + " operands but " +
           std::to_string(tensors.names.size()) + " tensors are given");

    std::vector<Term> terms;
    size_t ellipsisDims = 0;
    for (size_t k = 0; k < specs.size(); ++k) {
      terms.push_back({tensors.names[k], expand(specs[k], dimsOf(tensors.names[k]).size())});
      for (char c : terms.back().letters)
        if (isEllipsis(c)) ellipsisDims = std::max(ellipsisDims, size_t(c - '0') + 1);
    }
    std::string output;
    if (arrow != std::string::npos) {
      output = expand(text.substr(arrow + 2), std::string::npos, ellipsisDims);
    } else {
      // Implicit output: the ellipsis dims, then the letters used once, sorted.
      for (size_t k = ellipsisDims; k-- > 0;) output += char('0' + k);
      std::map<char, int> count;
      for (const Term &t : terms)
        for (char c : t.letters)
          if (!isEllipsis(c)) ++count[c];
      for (auto [c, n] : count)
        if (n == 1) output += c;
    }
    for (char c : output)
      if (std::count(output.begin(), output.end(), c) != 1) fail("its output names a letter twice");

    // Each letter's size, broadcasting 1 against n (symbolic sizes are taken
    // as torch.export checked them).
    bool dynamic = false;
    for (const Term &t : terms) {
      const std::vector<SymInt> &dims = dimsOf(t.value);
      for (size_t d = 0; d < dims.size(); ++d) {
        char c = t.letters[d];
        if (std::count(t.letters.begin(), t.letters.end(), c) != 1)
          fail("a letter repeated within one operand (a diagonal) is not supported");
        dynamic = dynamic || dims[d].isExpr;
        auto [it, fresh] = letterSize_.try_emplace(c, dims[d]);
        if (fresh || it->second == dims[d] || isOne(dims[d])) continue;
        if (isOne(it->second)) it->second = dims[d];
        else if (!it->second.isExpr && !dims[d].isExpr)
          fail("operands disagree on the size of '" + std::string(1, c) + "'");
      }
    }
    for (char c : output)
      if (!letterSize_.count(c)) fail("its output letter '" + std::string(1, c) + "' names no operand dim");
    if (dynamic) return broadcastProduct(terms, output, result);
    for (const auto &[c, v] : letterSize_) size_[c] = v.value;

    Term acc = sumUnneeded(terms[0], terms, 1, output);
    for (size_t k = 1; k < terms.size(); ++k) {
      Term next = sumUnneeded(terms[k], terms, k + 1, output);
      acc = contract(acc, next, neededAfter(terms, k + 1, output));
    }
    // Into the output's order, under the node's own result name.
    std::vector<int64_t> perm;
    for (char c : output) perm.push_back(int64_t(acc.letters.find(c)));
    std::string ordered = permute(acc, perm);
    std::vector<int64_t> outSizes;
    for (char c : output) outSizes.push_back(size_[c]);
    call("view", "default", {positional("self", Argument::tensor(ordered)), positional("size", Argument::ints_(outSizes))},
         outSizes, result);
    return emit_.take();
  }

private:
  static bool isEllipsis(char c) { return c >= '0' && c <= '9'; }

  [[noreturn]] void fail(const std::string &why) const {
    throw Error("einsum: " + why, {}, "node " + node_.displayName());
  }

  static bool isOne(const SymInt &v) { return !v.isExpr && v.value == 1; }
  std::vector<int64_t> sizes(const std::string &v) const { return emit_.sizes(v); }
  const std::vector<SymInt> &dimsOf(const std::string &v) const { return metaOf(emit_.graph, v).sizes; }

  /// The letters of one side, the ellipsis written as its dims' characters:
  /// `rank` dims for an operand, `ellipsisDims` for the output.
  std::string expand(const std::string &spec, size_t rank, size_t ellipsisDims = 0) const {
    size_t dots = spec.find("...");
    std::string letters;
    for (size_t i = 0; i < spec.size(); ++i) {
      if (i == dots) {
        size_t named = spec.size() - 3;
        size_t n = rank == std::string::npos ? ellipsisDims : rank >= named ? rank - named : 0;
        if (rank != std::string::npos && rank < named) fail("an operand has fewer dims than its letters");
        for (size_t k = n; k-- > 0;) letters += char('0' + k);
        if (n > 10) fail("an ellipsis over more than 10 dims is not supported");
        i += 2;
        continue;
      }
      char c = spec[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
        fail("'" + std::string(1, c) + "' in its equation is not a letter");
      letters += c;
    }
    if (rank != std::string::npos && letters.size() != rank)
      fail("an operand has " + std::to_string(rank) + " dims but its letters name " + std::to_string(letters.size()));
    return letters;
  }

  /// With a symbolic size, a bmm's views would need sizes computed at run
  /// time: instead every operand is permuted into one letter order (the
  /// output's, then the summed letters) and unsqueezed to that rank, the
  /// operands multiplied (broadcasting) and the letters the output lacks
  /// summed out. The product spans every letter, so it is only the fallback.
  std::vector<Node> broadcastProduct(const std::vector<Term> &terms, const std::string &output,
                                     const std::string &result) {
    std::string all = output;
    for (const Term &t : terms)
      for (char c : t.letters)
        if (all.find(c) == std::string::npos) all += c;
    std::vector<int64_t> summed;
    for (size_t p = output.size(); p < all.size(); ++p) summed.push_back(int64_t(p));
    std::string acc;
    std::vector<SymInt> accSizes;
    for (size_t k = 0; k < terms.size(); ++k) {
      const Term &t = terms[k];
      const std::vector<SymInt> &dims = dimsOf(t.value);
      std::vector<int64_t> perm;
      std::vector<SymInt> s;
      for (char c : all)
        if (size_t d = t.letters.find(c); d != std::string::npos) {
          perm.push_back(int64_t(d));
          s.push_back(dims[d]);
        }
      bool last = k + 1 == terms.size() && summed.empty();
      std::string v = permute(t, perm);
      for (size_t p = 0; p < all.size(); ++p)
        if (t.letters.find(all[p]) == std::string::npos) {
          s.insert(s.begin() + std::ptrdiff_t(p), SymInt::of(1));
          v = callSym("unsqueeze", "default",
                      {positional("self", Argument::tensor(v)), positional("dim", Argument::integer(int64_t(p)))}, s);
        }
      if (k == 0) {
        acc = v;
        accSizes = s;
        if (last) acc = callSym("clone", "default", {positional("self", Argument::tensor(acc))}, accSizes, result);
        continue;
      }
      for (size_t p = 0; p < all.size(); ++p)
        if (isOne(accSizes[p])) accSizes[p] = s[p];
      acc = callSym("mul", "Tensor", {positional("self", Argument::tensor(acc)), positional("other", Argument::tensor(v))},
                    accSizes, last ? result : "");
    }
    if (!summed.empty()) {
      accSizes.resize(output.size());
      callSym("sum", "dim_IntList",
              {positional("self", Argument::tensor(acc)), positional("dim", Argument::ints_(summed)),
               positional("keepdim", Argument::boolean(false))},
              accSizes, result);
    }
    return emit_.take();
  }

  /// Letters the operands from `from` on, or the output, still use.
  static std::string neededAfter(const std::vector<Term> &terms, size_t from, const std::string &output) {
    std::string needed = output;
    for (size_t k = from; k < terms.size(); ++k) needed += terms[k].letters;
    return needed;
  }

  /// Sums out the dims of `t` that no operand after `from - 1` and not the
  /// output need, unless an operand before it shares them (they contract).
  Term sumUnneeded(const Term &t, const std::vector<Term> &terms, size_t from, const std::string &output) {
    std::string needed = neededAfter(terms, from, output);
    for (size_t k = 0; k + 1 < from; ++k) needed += terms[k].letters;
    std::vector<int64_t> dims;
    Term kept{t.value, ""};
    for (size_t d = 0; d < t.letters.size(); ++d) {
      if (needed.find(t.letters[d]) == std::string::npos) dims.push_back(int64_t(d));
      else kept.letters += t.letters[d];
    }
    if (dims.empty()) return t;
    std::vector<int64_t> s;
    for (char c : kept.letters) s.push_back(sizes(t.value)[t.letters.find(c)]);
    kept.value = call("sum", "dim_IntList",
                      {positional("self", Argument::tensor(t.value)), positional("dim", Argument::ints_(dims)),
                       positional("keepdim", Argument::boolean(false))},
                      s);
    return kept;
  }

  /// a x b as one bmm: [batch, a-only, contracted] x [batch, contracted, b-only].
  Term contract(const Term &a, const Term &b, const std::string &needed) {
    std::string batch, aOnly, bOnly, summed;
    for (char c : a.letters) {
      bool inB = b.letters.find(c) != std::string::npos, keep = needed.find(c) != std::string::npos;
      (inB ? (keep ? batch : summed) : aOnly) += c;
    }
    for (char c : b.letters)
      if (a.letters.find(c) == std::string::npos) bOnly += c;
    std::string aOrder = batch + aOnly + summed, bOrder = batch + summed + bOnly;
    auto product = [&](const std::string &letters) {
      int64_t p = 1;
      for (char c : letters) {
        std::optional<int64_t> q = checkedMul(p, size_[c]);
        if (!q) fail("its operands' sizes overflow int64");
        p = *q;
      }
      return p;
    };
    int64_t nb = product(batch), m = product(aOnly), k = product(summed), n = product(bOnly);
    std::string lhs = shaped(a, aOrder, {nb, m, k}), rhs = shaped(b, bOrder, {nb, k, n});
    std::string bmm = call("bmm", "default", {positional("self", Argument::tensor(lhs)), positional("mat2", Argument::tensor(rhs))},
                           {nb, m, n});
    Term out{"", batch + aOnly + bOnly};
    std::vector<int64_t> s;
    for (char c : out.letters) s.push_back(size_[c]);
    out.value = call("view", "default", {positional("self", Argument::tensor(bmm)), positional("size", Argument::ints_(s))}, s);
    return out;
  }

  /// `t` permuted into `order`, broadcast to every letter's full size, and viewed as `shape`.
  std::string shaped(const Term &t, const std::string &order, const std::vector<int64_t> &shape) {
    std::vector<int64_t> perm, full;
    for (char c : order) {
      perm.push_back(int64_t(t.letters.find(c)));
      full.push_back(size_[c]);
    }
    std::string v = permute(t, perm);
    std::vector<int64_t> s = sizes(v);
    if (s != full)
      v = call("expand", "default", {positional("self", Argument::tensor(v)), positional("size", Argument::ints_(full))}, full);
    return call("view", "default", {positional("self", Argument::tensor(v)), positional("size", Argument::ints_(shape))}, shape);
  }

  /// `t` with its dims in `perm`'s order (itself when that is the order it has).
  std::string permute(const Term &t, const std::vector<int64_t> &perm) {
    bool identity = true;
    for (size_t d = 0; d < perm.size(); ++d) identity = identity && perm[d] == int64_t(d);
    if (identity) return t.value;
    const std::vector<SymInt> &s = dimsOf(t.value);
    std::vector<SymInt> out;
    for (int64_t d : perm) out.push_back(s[size_t(d)]);
    return callSym("permute", "default",
                   {positional("self", Argument::tensor(t.value)), positional("dims", Argument::ints_(perm))}, out);
  }

  /// One call whose result has the einsum's dtype and device and `sizes`.
  std::string call(const char *name, const char *overload, std::vector<NamedArgument> args,
                   const std::vector<int64_t> &sizes, const std::string &result = "") {
    return emit_.call(name, overload, std::move(args), emit_.meta(node_.outputs.at(0).name, sizes), result);
  }

  /// The same with sizes that may be symbolic.
  std::string callSym(const char *name, const char *overload, std::vector<NamedArgument> args,
                      const std::vector<SymInt> &sizes, const std::string &result = "") {
    return emit_.call(name, overload, std::move(args), emit_.meta(node_.outputs.at(0).name, sizes), result);
  }

  const Node &node_;
  NodeEmitter emit_;
  std::map<char, SymInt> letterSize_;
  std::map<char, int64_t> size_; // the same, all static (the bmm path)
};

} // namespace

void decomposeEinsum(Program &program) {
  TargetCache targets;
  for (auto &[methodName, method] : program.methods)
    rewriteNodes(method.program.graph, [&](Graph &g, Node &node) -> std::optional<std::vector<Node>> {
      const OpTarget &t = targets(node);
      if (t.dialect != TargetDialect::Aten || t.ns != "aten" || t.name != "einsum") return std::nullopt;
      return EinsumLowering(g, node).run();
    });
}

} // namespace exir::edge
