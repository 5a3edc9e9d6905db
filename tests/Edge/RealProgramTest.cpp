//===- tests/Edge/RealProgramTest.cpp - training-IR lowering --------------===//
//
// The passes that let exir-edge take torch >= 2.5 training IR: functionalization
// (in-place ops, buffer mutations), assert removal, the decomposition rules
// engine (each builtin rule family, symbolic sizes, user rules), the unrolled
// lstm and the contiguous metadata of _copy ops.
//
//===----------------------------------------------------------------------===//
#include "Edge/DecompositionRules.h"
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Edge/SymSize.h"
#include "Support/FileIO.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace exir;
using namespace irtest;
using Ints = std::vector<int64_t>;
using edge::metaOf;
using edge::targetOf;

namespace {

constexpr ScalarType F32 = ScalarType::Float;

std::vector<std::string> targets(const Graph &g) {
  std::vector<std::string> out;
  for (const auto &n : g.nodes) out.push_back(targetOf(n).qualifiedName());
  return out;
}

const Argument &arg(const Node &n, const std::string &name) {
  const NamedArgument *a = n.input(name);
  REQUIRE(a);
  return a->arg;
}

SymInt sym(const std::string &s) { return SymInt::symbol("Symbol('" + s + "', positive=True, integer=True)"); }

} // namespace

TEST_CASE("functionalize: in-place ops on intermediates become functional, later reads follow", "[edge][functionalize]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.aten("relu_.default", {pos("self", T("x"))}, "relu_", F32, {2, 3});
  b.aten("hardtanh_.default", {pos("self", T("relu_")), pos("min_val", Argument::real(0)), pos("max_val", Argument::real(6))},
         "hardtanh_", F32, {2, 3});
  b.aten("add.Tensor", {pos("self", T("relu_")), pos("other", T("relu_"))}, "add", F32, {2, 3});
  b.output("add");
  Program p = programOf(b.ep);
  edge::functionalize(p);
  Graph &g = graphOf(p);
  CHECK(targets(g) == std::vector<std::string>{"aten::relu", "aten::hardtanh", "aten::add.Tensor"});
  // relu_ mutated x (a user input); hardtanh_ then mutated that value again.
  CHECK(arg(g.nodes[2], "self").name == "hardtanh_");
  auto &specs = methodOf(p).signature.outputSpecs;
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].kind == OutputKind::UserInputMutation);
  CHECK(specs[0].target == "x");
  CHECK(specs[0].arg.name == "hardtanh_");
  CHECK(g.outputs[0].name == "hardtanh_");
  CHECK(specs[1].arg.name == "add");
}

TEST_CASE("functionalize: index_copy_ on a buffer becomes a buffer mutation output", "[edge][functionalize]") {
  GraphBuilder b;
  b.input("b_k", F32, {1, 8, 4}, InputKind::Buffer, "k");
  b.input("x", F32, {1, 2, 4});
  b.input("i", ScalarType::Long, {2});
  b.aten("index_copy_.default", {pos("self", T("b_k")), pos("dim", Argument::integer(1)), pos("index", T("i")), pos("source", T("x"))},
         "index_copy_", F32, {1, 8, 4});
  b.aten("sum.dim_IntList", {pos("self", T("index_copy_")), pos("dim", Argument::ints_({1}))}, "sum_1", F32, {1, 4});
  b.output("sum_1");
  Program p = programOf(b.ep);
  edge::functionalize(p);
  edge::decomposeRules(p);
  Graph &g = graphOf(p);
  REQUIRE(targets(g) == std::vector<std::string>{"aten::index_put", "aten::sum.dim_IntList"});
  // index_copy(dim=1) is index_put with indices [None, i].
  CHECK(arg(g.nodes[0], "indices").kind == ArgKind::OptionalTensors);
  CHECK(arg(g.nodes[0], "indices").names == std::vector<std::string>{"", "i"});
  auto &specs = methodOf(p).signature.outputSpecs;
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].kind == OutputKind::BufferMutation);
  CHECK(specs[0].target == "k");
  CHECK(specs[0].arg.name == "index_copy_");
}

TEST_CASE("remove-asserts drops asserts and the symbolic ops only they used", "[edge][asserts]") {
  GraphBuilder b;
  b.input("x", F32, {6});
  b.aten("nonzero.default", {pos("self", T("x"))}, "nz", ScalarType::Long, {3, 1});
  Argument s = b.symSize("nz", 0, "u").outputs[0];
  b.ep.graph.symIntValues.set("u", SymInt::symbol("u0"));
  Node ge;
  ge.target = "_operator.ge";
  Argument gs = s;
  gs.syms[0].name = "ge";
  gs.kind = ArgKind::SymBool;
  ge.inputs = {pos("a", s), pos("b", Argument::integer(0))};
  ge.outputs = {gs};
  b.ep.graph.nodes.push_back(ge);
  Node check;
  check.target = "torch.ops.aten._assert_scalar.default";
  check.inputs = {pos("self", gs), pos("assert_msg", Argument::string("u0 >= 0"))};
  b.ep.graph.nodes.push_back(check);
  b.output("nz");
  Program p = programOf(b.ep);
  edge::removeGraphAsserts(p);
  CHECK(targets(graphOf(p)) == std::vector<std::string>{"aten::nonzero"});
  CHECK(graphOf(p).symIntValues.empty());
}

TEST_CASE("rules: layer_norm -> native_layer_norm with mean/rstd shapes", "[edge][rules]") {
  GraphBuilder b;
  b.input("x", F32, {2, 5, 8}).param("w", "ln.weight", F32, {8}).param("bias", "ln.bias", F32, {8});
  b.aten("layer_norm.default", {pos("input", T("x")), pos("normalized_shape", Argument::ints_({8})), pos("weight", T("w")),
                                pos("bias", T("bias"))},
         "ln", F32, {2, 5, 8});
  b.output("ln");
  Program p = programOf(b.ep);
  edge::decomposeRules(p);
  Graph &g = graphOf(p);
  REQUIRE(targets(g) == std::vector<std::string>{"aten::native_layer_norm"});
  CHECK(arg(g.nodes[0], "eps").floatValue == Approx(1e-5)); // the schema default, filled in
  REQUIRE(g.nodes[0].outputs.size() == 3);
  CHECK(g.nodes[0].outputs[0].name == "ln");
  CHECK(sizesOf(g, g.nodes[0].outputs[1].name) == Ints{2, 5, 1});
  CHECK(sizesOf(g, g.nodes[0].outputs[2].name) == Ints{2, 5, 1});
}

TEST_CASE("rules: identities redirect uses, to with another dtype becomes _to_copy", "[edge][rules]") {
  GraphBuilder b;
  b.input("x", F32, {4});
  b.aten("dropout.default", {pos("input", T("x")), pos("p", Argument::real(0.1)), pos("train", Argument::boolean(false))}, "d",
         F32, {4});
  b.aten("to.dtype_layout", {pos("self", T("d")), kw("dtype", Argument::scalarType(F32))}, "same", F32, {4});
  b.aten("to.dtype_layout", {pos("self", T("same")), kw("dtype", Argument::scalarType(ScalarType::Half))}, "half",
         ScalarType::Half, {4});
  b.output("half");
  Program p = programOf(b.ep);
  edge::decomposeRules(p);
  Graph &g = graphOf(p);
  REQUIRE(targets(g) == std::vector<std::string>{"aten::_to_copy"});
  CHECK(arg(g.nodes[0], "self").name == "x");
  CHECK(arg(g.nodes[0], "dtype").intValue == int64_t(ScalarType::Half));
  CHECK_FALSE(g.tensorValues.contains("d"));
}

TEST_CASE("rules: linear on a dynamic rank-3 input views with sym sizes", "[edge][rules][dynamic]") {
  GraphBuilder b;
  b.input("x", F32, {1, 1, 64}).param("w", "l.weight", F32, {10, 64}).param("bias", "l.bias", F32, {10});
  b.ep.graph.tensorValues.find("x")->sizes = {SymInt::of(2), sym("s0"), SymInt::of(64)};
  b.aten("linear.default", {pos("input", T("x")), pos("weight", T("w")), pos("bias", T("bias"))}, "y", F32, {1, 1, 10});
  b.ep.graph.tensorValues.find("y")->sizes = {SymInt::of(2), sym("s0"), SymInt::of(10)};
  b.output("y");
  Program p = programOf(b.ep);
  edge::decomposeRules(p);
  Graph &g = graphOf(p);
  REQUIRE(targets(g) == std::vector<std::string>{"aten::permute", "aten::view", "aten::addmm", "aten::view"});
  // [2*s0, 64]: the one symbolic size is inferred (-1).
  const Argument &flat = arg(g.nodes[1], "size");
  REQUIRE(flat.kind == ArgKind::SymInts);
  CHECK(flat.syms[0].intValue == -1);
  CHECK(flat.syms[1].intValue == 64);
  const TensorMeta &x2 = metaOf(g, g.nodes[1].outputs[0].name);
  CHECK(x2.sizes[0].expr() == "Mul(Integer(2), Symbol('s0', positive=True, integer=True))");
  CHECK(x2.strides[0].value == 64);
  CHECK(g.nodes[3].outputs[0].name == "y");
}

TEST_CASE("rules: a second symbolic view size is read with sym_size.int", "[edge][rules][dynamic]") {
  GraphBuilder b;
  b.input("x", F32, {1, 1, 4});
  b.ep.graph.tensorValues.find("x")->sizes = {sym("s0"), sym("s1"), SymInt::of(4)};
  b.aten("flatten.using_ints", {pos("self", T("x")), pos("start_dim", Argument::integer(2))}, "f", F32, {1, 1, 4});
  b.ep.graph.tensorValues.find("f")->sizes = {sym("s0"), sym("s1"), SymInt::of(4)};
  b.output("f");
  Program p = programOf(b.ep);
  edge::decomposeRules(p);
  Graph &g = graphOf(p);
  REQUIRE(targets(g) == std::vector<std::string>{"aten::sym_size.int", "aten::view"});
  CHECK(arg(g.nodes[0], "dim").intValue == 1);
  const Argument &size = arg(g.nodes[1], "size");
  CHECK(size.syms[0].intValue == -1);
  CHECK(size.syms[1].isName);
  CHECK(size.syms[1].name == g.nodes[0].outputs[0].syms[0].name);
}

TEST_CASE("rules: sdpa with a boolean mask -> where bias, bmm, softmax", "[edge][rules][attention]") {
  GraphBuilder b;
  b.input("q", F32, {1, 2, 3, 4}).input("k", F32, {1, 2, 5, 4}).input("v", F32, {1, 2, 5, 6});
  b.input("m", ScalarType::Bool, {1, 1, 3, 5});
  b.aten("scaled_dot_product_attention.default",
         {pos("query", T("q")), pos("key", T("k")), pos("value", T("v")), pos("attn_mask", T("m"))}, "o", F32, {1, 2, 3, 6});
  b.output("o");
  Program p = programOf(b.ep);
  edge::decomposeRules(p);
  Graph &g = graphOf(p);
  CHECK(targets(g) == std::vector<std::string>{"aten::where.self", "aten::view", "aten::permute", "aten::view",
                                               "aten::bmm", "aten::mul.Tensor", "aten::view", "aten::add.Tensor",
                                               "aten::_softmax", "aten::view", "aten::view", "aten::bmm", "aten::view"});
  CHECK(std::isinf(arg(g.nodes[0], "other").floatValue));
  CHECK(arg(g.nodes[5], "other").floatValue == Approx(0.5)); // 1/sqrt(4)
  CHECK(sizesOf(g, g.nodes[4].outputs[0].name) == Ints{2, 3, 5});
  CHECK(g.nodes.back().outputs[0].name == "o");
}

TEST_CASE("rules: user rules are tried first and checked against the table", "[edge][rules]") {
  auto user = edge::DecompositionRules::parse(
      "- match: aten::hardswish\n  steps: [{call: aten::relu, args: {self: $self}, out: out}]\n", "user.yaml");
  edge::DecompositionRules all;
  all.prepend(edge::DecompositionRules::builtin());
  all.prepend(user);
  GraphBuilder b;
  b.input("x", F32, {4});
  b.aten("hardswish.default", {pos("self", T("x"))}, "h", F32, {4});
  b.output("h");
  Program p = programOf(b.ep);
  edge::decomposeWithRules(p, all);
  CHECK(targets(graphOf(p)) == std::vector<std::string>{"aten::relu"});

  Program q = programOf(b.ep);
  edge::decomposeRules(q);
  CHECK(targets(graphOf(q)) ==
        std::vector<std::string>{"aten::add.Tensor", "aten::clamp", "aten::mul.Tensor", "aten::div.Tensor"});

  CHECK(errorOf([] { edge::DecompositionRules::parse("- match: aten::nope\n  returns: [$self]\n", "bad.yaml"); }) ==
        "'bad.yaml': line 1: rule matches aten::nope, which the operator table does not know");
  CHECK(errorOf([] {
          edge::DecompositionRules::parse("- match: aten::relu6\n  steps: [{call: aten::hardtanh, out: out}]\n", "bad.yaml");
        }) == "'bad.yaml': line 2: step calling aten::hardtanh does not pass the required argument 'self'");
}

TEST_CASE("every builtin rule names known ops", "[edge][rules]") {
  const auto &rules = edge::DecompositionRules::builtin();
  CHECK(rules.size() > 30);
  // Parsed a rule at a time when needed: here all at once, so that a broken rule fails this test.
  CHECK(rules.parseAll() == rules.size());
  auto ops = rules.matchedOps();
  for (const char *op : {"aten::layer_norm", "aten::scaled_dot_product_attention", "aten::linear", "aten::arange",
                         "aten::hardswish", "aten::diff", "aten::max_pool2d", "aten::index_copy"})
    CHECK(std::find(ops.begin(), ops.end(), op) != ops.end());
  // Parsed a rule at a time, the file gives the same rules, at the same lines, as parsed whole.
  const std::string path = std::string(EXIR_SOURCE_DIR) + "/lib/Edge/decompositions.yaml";
  const std::string text = readFileOrStdin(path);
  auto whole = edge::DecompositionRules::parse(text, "lib/Edge/decompositions.yaml");
  CHECK(whole.size() == rules.size());
  CHECK(whole.matchedOps() == ops);
  std::vector<std::string> lines = {""}; // 1-based
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = std::min(text.find('\n', pos), text.size());
    lines.push_back(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  for (const auto &op : ops) {
    CAPTURE(op);
    auto described = rules.describe(op);
    CHECK(described == whole.describe(op));
    for (const auto &d : described) {
      size_t colon = d.find(':', d.find(".yaml:") + 6);
      size_t line = std::stoul(d.substr(d.find(".yaml:") + 6, colon));
      REQUIRE(line < lines.size());
      CHECK_THAT(lines[line], Catch::Matchers::StartsWith("- match: " + op.substr(0, op.find('.'))));
    }
  }
}

TEST_CASE("decompose-rnn unrolls lstm over time", "[edge][rnn]") {
  GraphBuilder b;
  b.input("x", F32, {1, 2, 3}).input("h0", F32, {1, 1, 4}).input("c0", F32, {1, 1, 4});
  b.param("wih", "l.w_ih", F32, {16, 3}).param("whh", "l.w_hh", F32, {16, 4});
  b.param("bih", "l.b_ih", F32, {16}).param("bhh", "l.b_hh", F32, {16});
  Node &n = b.aten("lstm.input",
                   {pos("input", T("x")), pos("hx", Argument::tensors({"h0", "c0"})),
                    pos("params", Argument::tensors({"wih", "whh", "bih", "bhh"})), pos("has_biases", Argument::boolean(true)),
                    pos("num_layers", Argument::integer(1)), pos("dropout", Argument::real(0)),
                    pos("train", Argument::boolean(false)), pos("bidirectional", Argument::boolean(false)),
                    pos("batch_first", Argument::boolean(true))},
                   "out", F32, {1, 2, 4});
  n.outputs.push_back(T("hn"));
  n.outputs.push_back(T("cn"));
  b.ep.graph.tensorValues.set("hn", meta(F32, {1, 1, 4}));
  b.ep.graph.tensorValues.set("cn", meta(F32, {1, 1, 4}));
  b.output("out");
  Program p = programOf(b.ep);
  edge::decomposeRnn(p);
  Graph &g = graphOf(p);
  auto t = targets(g);
  CHECK(std::count(t.begin(), t.end(), "aten::addmm") == 4); // 2 steps x (input, hidden)
  CHECK(std::count(t.begin(), t.end(), "aten::sigmoid") == 6);
  CHECK(std::count(t.begin(), t.end(), "aten::cat") == 3);
  bool outDefined = false;
  for (const auto &node : g.nodes)
    if (!node.outputs.empty() && node.outputs[0].name == "out") outDefined = targetOf(node).name == "cat";
  CHECK(outDefined);
}

TEST_CASE("replace-view-ops gives _copy outputs contiguous strides", "[edge][views]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.aten("permute.default", {pos("self", T("x")), pos("dims", Argument::ints_({1, 0}))}, "t", F32, {3, 2});
  b.ep.graph.tensorValues.find("t")->strides = {SymInt::of(1), SymInt::of(3)}; // the traced view's strides
  b.output("t");
  Program p = programOf(b.ep);
  edge::replaceViewOps(p);
  const TensorMeta &m = metaOf(graphOf(p), "t");
  CHECK(m.strides == std::vector<SymInt>{SymInt::of(2), SymInt::of(1)});
  CHECK(m.dimOrder() == Ints{0, 1});
}

TEST_CASE("symbolic size arithmetic folds constants and writes srepr", "[edge][symsize]") {
  SymInt s = sym("s0");
  CHECK(edge::symMul(SymInt::of(3), SymInt::of(4)).value == 12);
  CHECK(edge::symMul(SymInt::of(1), s) == s);
  CHECK(edge::symMul(s, SymInt::of(4)).expr() == "Mul(Integer(4), Symbol('s0', positive=True, integer=True))");
  CHECK(edge::symAdd(s, SymInt::of(0)) == s);
  CHECK(edge::symFloorDiv(SymInt::of(-7), SymInt::of(2)).value == -4);
  auto strides = edge::symContiguousStrides({s, SymInt::of(4), SymInt::of(1)});
  CHECK(strides[0].value == 4);
  CHECK(strides[1].value == 1);
}

TEST_CASE("batch_norm in training mode updates the running statistics as buffer mutations", "[edge][rules][batchnorm]") {
  GraphBuilder b;
  b.param("w", "bn.weight", F32, {3}).param("bias", "bn.bias", F32, {3});
  b.input("rm", F32, {3}, InputKind::Buffer, "bn.running_mean").input("rv", F32, {3}, InputKind::Buffer, "bn.running_var");
  b.input("x", F32, {2, 3, 4, 4});
  b.aten("batch_norm.default", {pos("input", T("x")), pos("weight", T("w")), pos("bias", T("bias")), pos("running_mean", T("rm")),
                                pos("running_var", T("rv")), pos("training", Argument::boolean(true)),
                                pos("momentum", Argument::real(0.1)), pos("eps", Argument::real(1e-5)),
                                pos("cudnn_enabled", Argument::boolean(false))},
         "y", F32, {2, 3, 4, 4});
  b.output("y");
  Program p = programOf(b.ep);
  edge::decomposeRules(p);
  edge::functionalize(p);
  Graph &g = graphOf(p);
  auto t = targets(g);
  CHECK(std::count(t.begin(), t.end(), "aten::copy_") == 0);
  CHECK(std::count(t.begin(), t.end(), "aten::var.correction") == 2);
  CHECK(t.front() == "aten::mean.dim");
  CHECK(arg(g.nodes[0], "dim").ints == Ints{0, 2, 3});
  auto &specs = methodOf(p).signature.outputSpecs;
  REQUIRE(specs.size() == 3);
  CHECK(specs[0].kind == OutputKind::BufferMutation);
  CHECK(specs[0].target == "bn.running_mean");
  CHECK(specs[1].target == "bn.running_var");
  CHECK(specs[2].arg.name == "y");
  // The new running mean is (1 - momentum) * old + momentum * batch mean.
  const Node *update = nullptr;
  for (const auto &n : g.nodes)
    if (n.outputs[0].name == specs[0].arg.name) update = &n;
  REQUIRE(update);
  CHECK(targetOf(*update).qualifiedName() == "aten::add.Tensor");
  CHECK_FALSE(g.tensorValues.contains("mean_written"));
}

TEST_CASE("optional-tensor-lists retypes Tensor?[] arguments written as Tensor[]", "[edge][lists]") {
  GraphBuilder b;
  b.input("x", F32, {4, 5}).input("i", ScalarType::Long, {2}).input("j", ScalarType::Long, {2});
  b.aten("index.Tensor", {pos("self", T("x")), pos("indices", Argument::tensors({"i", "j"}))}, "y", F32, {2});
  b.aten("cat.default", {pos("tensors", Argument::tensors({"y", "y"}))}, "z", F32, {4});
  b.output("z");
  Program p = programOf(b.ep);
  edge::optionalTensorLists(p);
  CHECK(arg(graphOf(p).nodes[0], "indices").kind == ArgKind::OptionalTensors);
  CHECK(arg(graphOf(p).nodes[0], "indices").names == std::vector<std::string>{"i", "j"});
  CHECK(arg(graphOf(p).nodes[1], "tensors").kind == ArgKind::Tensors); // Tensor[] stays
}

TEST_CASE("rules: causal sdpa builds the lower-triangle mask, GQA repeats key/value heads", "[edge][rules][attention]") {
  GraphBuilder b;
  b.input("q", F32, {1, 4, 3, 8}).input("k", F32, {1, 2, 3, 8}).input("v", F32, {1, 2, 3, 8});
  b.aten("scaled_dot_product_attention.default",
         {pos("query", T("q")), pos("key", T("k")), pos("value", T("v")), pos("is_causal", Argument::boolean(true)),
          kw("enable_gqa", Argument::boolean(true))},
         "o", F32, {1, 4, 3, 8});
  b.output("o");
  Program p = programOf(b.ep);
  edge::decomposeRules(p);
  Graph &g = graphOf(p);
  auto t = targets(g);
  REQUIRE(t.size() > 6);
  // GQA: [1, 2, 3, 8] -> unsqueeze [1, 2, 1, 3, 8] -> expand [1, 2, 2, 3, 8] -> view [1, 4, 3, 8].
  CHECK(t[0] == "aten::unsqueeze");
  CHECK(t[1] == "aten::expand");
  CHECK(arg(g.nodes[1], "size").ints == Ints{1, 2, 2, 3, 8});
  CHECK(arg(g.nodes[2], "size").ints == Ints{1, 4, 3, 8});
  // Causal: cols <= rows over aranges, as a boolean [3, 3] mask, then the where bias.
  auto le = std::find(t.begin(), t.end(), "aten::le.Tensor");
  REQUIRE(le != t.end());
  const Node &mask = g.nodes[size_t(le - t.begin())];
  CHECK(metaOf(g, mask.outputs[0].name).dtype == ScalarType::Bool);
  CHECK(sizesOf(g, mask.outputs[0].name) == Ints{3, 3});
  CHECK(std::find(t.begin(), t.end(), "aten::where.self") != t.end());
  CHECK(std::count(t.begin(), t.end(), "aten::bmm") == 2);
  CHECK(std::count(t.begin(), t.end(), "aten::scaled_dot_product_attention") == 0);
}

TEST_CASE("rules: conv_transpose2d -> convolution(transposed), upsample_nearest2d -> .vec", "[edge][rules]") {
  GraphBuilder b;
  b.input("x", F32, {1, 4, 5, 5}).param("w", "ct.weight", F32, {4, 2, 3, 3});
  b.aten("conv_transpose2d.input", {pos("input", T("x")), pos("weight", T("w")), pos("stride", Argument::ints_({2}))}, "y",
         F32, {1, 2, 11, 11});
  b.aten("upsample_nearest2d.default", {pos("self", T("y")), pos("output_size", Argument::ints_({22, 22}))}, "z", F32,
         {1, 2, 22, 22});
  b.output("z");
  Program p = programOf(b.ep);
  edge::decomposeRules(p);
  Graph &g = graphOf(p);
  REQUIRE(targets(g) == std::vector<std::string>{"aten::convolution", "aten::upsample_nearest2d.vec"});
  CHECK(arg(g.nodes[0], "transposed").intValue == 1);
  CHECK(arg(g.nodes[0], "stride").ints == Ints{2, 2});
  CHECK(arg(g.nodes[0], "padding").ints == Ints{0, 0});
  CHECK(arg(g.nodes[0], "output_padding").ints == Ints{0, 0});
  CHECK(arg(g.nodes[0], "bias").kind == ArgKind::None);
  CHECK(arg(g.nodes[1], "output_size").ints == Ints{22, 22});
}

TEST_CASE("functionalize: out= calls become their functional op", "[edge][functionalize]") {
  GraphBuilder b;
  b.input("x", F32, {3}).input("y", F32, {3}).input("buf", F32, {3});
  b.aten("add.out", {pos("self", T("x")), pos("other", T("y")), kw("out", T("buf"))}, "add", F32, {3});
  b.output("add");
  Program p = programOf(b.ep);
  edge::functionalize(p);
  Graph &g = graphOf(p);
  REQUIRE(targets(g) == std::vector<std::string>{"aten::add.Tensor"});
  CHECK(argNames(g.nodes[0]) == std::vector<std::string>{"self", "other"});
  auto &specs = methodOf(p).signature.outputSpecs;
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].kind == OutputKind::UserInputMutation);
  CHECK(specs[0].target == "buf");
}

TEST_CASE("decompose-rnn unrolls a two-layer gru", "[edge][rnn]") {
  GraphBuilder b;
  b.input("x", F32, {3, 1, 2}).input("h0", F32, {2, 1, 4});
  b.param("w0", "g.w_ih0", F32, {12, 2}).param("u0", "g.w_hh0", F32, {12, 4});
  b.param("w1", "g.w_ih1", F32, {12, 4}).param("u1", "g.w_hh1", F32, {12, 4});
  Node &n = b.aten("gru.input",
                   {pos("input", T("x")), pos("hx", T("h0")), pos("params", Argument::tensors({"w0", "u0", "w1", "u1"})),
                    pos("has_biases", Argument::boolean(false)), pos("num_layers", Argument::integer(2)),
                    pos("dropout", Argument::real(0)), pos("train", Argument::boolean(false)),
                    pos("bidirectional", Argument::boolean(false)), pos("batch_first", Argument::boolean(false))},
                   "out", F32, {3, 1, 4});
  n.outputs.push_back(T("hn"));
  b.ep.graph.tensorValues.set("hn", meta(F32, {2, 1, 4}));
  b.output("out");
  Program p = programOf(b.ep);
  edge::decomposeRnn(p);
  Graph &g = graphOf(p);
  auto t = targets(g);
  CHECK(std::count(t.begin(), t.end(), "aten::mm") == 12); // 2 layers x 3 steps x (input, hidden)
  CHECK(std::count(t.begin(), t.end(), "aten::tanh") == 6);
  CHECK(std::count(t.begin(), t.end(), "aten::sub.Tensor") == 6);
  CHECK(g.nodes.back().outputs[0].name == "hn");
  CHECK(sizesOf(g, "hn") == Ints{2, 1, 4});
}

namespace {
/// One node `op(args) -> out` on input x, decomposed by the builtin rules.
Program ruleProgram(const std::string &op, std::vector<NamedArgument> args, ScalarType outType, const Ints &outSizes,
                    const Ints &xSizes = {2, 6}, ScalarType xType = F32) {
  GraphBuilder b;
  b.input("x", xType, xSizes);
  Node &n = b.aten(op, std::move(args), "out", outType, outSizes);
  (void)n;
  b.output("out");
  Program p = programOf(b.ep);
  edge::decomposeRules(p);
  return p;
}
} // namespace

TEST_CASE("rules: factories become full / arange.start_step", "[edge][rules]") {
  Program zeros = ruleProgram("zeros.default", {pos("size", Argument::ints_({2, 3}))}, F32, {2, 3});
  REQUIRE(targets(graphOf(zeros)) == std::vector<std::string>{"aten::full"});
  CHECK(arg(graphOf(zeros).nodes[0], "fill_value").intValue == 0);
  CHECK(arg(graphOf(zeros).nodes[0], "dtype").intValue == int64_t(F32)); // from the traced output

  Program ones = ruleProgram("new_ones.default", {pos("self", T("x")), pos("size", Argument::ints_({}))},
                             ScalarType::Bool, {}, {2, 6}, ScalarType::Long);
  REQUIRE(targets(graphOf(ones)) == std::vector<std::string>{"aten::full"});
  CHECK(arg(graphOf(ones).nodes[0], "size").ints.empty());
  CHECK(arg(graphOf(ones).nodes[0], "dtype").intValue == int64_t(ScalarType::Long)); // self's dtype

  Program scalar = ruleProgram("scalar_tensor.default", {pos("s", Argument::real(-3.5))}, F32, {});
  REQUIRE(targets(graphOf(scalar)) == std::vector<std::string>{"aten::full"});
  CHECK(arg(graphOf(scalar).nodes[0], "fill_value").floatValue == -3.5);

  Program range = ruleProgram("arange.default", {pos("end", Argument::integer(7))}, ScalarType::Long, {7});
  REQUIRE(targets(graphOf(range)) == std::vector<std::string>{"aten::arange.start_step"});
  CHECK(arg(graphOf(range).nodes[0], "start").intValue == 0);
  CHECK(arg(graphOf(range).nodes[0], "end").intValue == 7);
  CHECK(arg(graphOf(range).nodes[0], "step").intValue == 1);
}

TEST_CASE("rules: transpose, chunk, pooling, __and__, sum", "[edge][rules]") {
  Program tr = ruleProgram("transpose.int", {pos("self", T("x")), pos("dim0", Argument::integer(-1)),
                                             pos("dim1", Argument::integer(0))},
                           F32, {6, 2});
  REQUIRE(targets(graphOf(tr)) == std::vector<std::string>{"aten::permute"});
  CHECK(arg(graphOf(tr).nodes[0], "dims").ints == Ints{1, 0});

  GraphBuilder b;
  b.input("x", F32, {2, 7});
  Node &n = b.aten("chunk.default", {pos("self", T("x")), pos("chunks", Argument::integer(3)), pos("dim", Argument::integer(1))},
                   "c", F32, {2, 3});
  n.outputs = {Argument::tensors({"c0", "c1", "c2"})};
  b.ep.graph.tensorValues.set("c0", meta(F32, {2, 3}));
  b.ep.graph.tensorValues.set("c1", meta(F32, {2, 3}));
  b.ep.graph.tensorValues.set("c2", meta(F32, {2, 1}));
  b.output("c0");
  Program chunk = programOf(b.ep);
  edge::decomposeRules(chunk);
  REQUIRE(targets(graphOf(chunk)) == std::vector<std::string>{"aten::split.Tensor"});
  CHECK(arg(graphOf(chunk).nodes[0], "split_size").intValue == 3); // ceil(7 / 3)
  CHECK(graphOf(chunk).nodes[0].outputs[0].names == std::vector<std::string>{"c0", "c1", "c2"});

  Program pool = ruleProgram("max_pool2d.default", {pos("self", T("x")), pos("kernel_size", Argument::ints_({2, 2}))}, F32,
                             {1, 2, 2, 2}, {1, 2, 4, 4});
  REQUIRE(targets(graphOf(pool)) == std::vector<std::string>{"aten::max_pool2d_with_indices"});
  const Node &mp = graphOf(pool).nodes[0];
  REQUIRE(mp.outputs.size() == 2);
  CHECK(metaOf(graphOf(pool), mp.outputs[1].name).dtype == ScalarType::Long);
  CHECK(sizesOf(graphOf(pool), mp.outputs[1].name) == Ints{1, 2, 2, 2});

  Program avg = ruleProgram("adaptive_avg_pool2d.default", {pos("self", T("x")), pos("output_size", Argument::ints_({1, 1}))},
                            F32, {1, 2, 1, 1}, {1, 2, 4, 4});
  CHECK(targets(graphOf(avg)) == std::vector<std::string>{"aten::_adaptive_avg_pool2d"});

  GraphBuilder a;
  a.input("x", ScalarType::Bool, {3}).input("y", ScalarType::Bool, {3});
  a.aten("__and__.Tensor", {pos("self", T("x")), pos("other", T("y"))}, "out", ScalarType::Bool, {3});
  a.output("out");
  Program andp = programOf(a.ep);
  edge::decomposeRules(andp);
  CHECK(targets(graphOf(andp)) == std::vector<std::string>{"aten::bitwise_and.Tensor"});

  Program sum = ruleProgram("sum.default", {pos("self", T("x"))}, F32, {});
  REQUIRE(targets(graphOf(sum)) == std::vector<std::string>{"aten::sum.dim_IntList"});
  CHECK(arg(graphOf(sum).nodes[0], "dim").ints == Ints{0, 1});
}

TEST_CASE("rules: diff with prepend on a symbolic dim", "[edge][rules][dynamic]") {
  GraphBuilder b;
  b.input("x", ScalarType::Long, {1, 1}).input("pre", ScalarType::Long, {1, 1});
  b.ep.graph.tensorValues.find("x")->sizes = {SymInt::of(1), sym("s0")};
  b.aten("diff.default", {pos("self", T("x")), pos("prepend", T("pre"))}, "d", ScalarType::Long, {1, 1});
  b.ep.graph.tensorValues.find("d")->sizes = {SymInt::of(1), sym("s0")};
  b.output("d");
  Program p = programOf(b.ep);
  edge::decomposeRules(p);
  Graph &g = graphOf(p);
  REQUIRE(targets(g) == std::vector<std::string>{"aten::cat", "aten::slice.Tensor", "aten::slice.Tensor", "aten::sub.Tensor"});
  const TensorMeta &joined = metaOf(g, g.nodes[0].outputs[0].name);
  CHECK(joined.sizes[1].expr() == "Add(Integer(1), Symbol('s0', positive=True, integer=True))");
  CHECK(arg(g.nodes[1], "start").intValue == 1);
  CHECK(arg(g.nodes[2], "end").intValue == -1);
  CHECK(g.nodes[3].outputs[0].name == "d");
}

TEST_CASE("rule errors name the rule, the node and the user's line", "[edge][rules]") {
  auto rules = edge::DecompositionRules::parse(
      "- match: aten::relu6\n  steps: [{call: aten::hardtanh, args: {self: $self, min_val: $nope}, out: out}]\n", "mine.yaml");
  GraphBuilder b;
  b.input("x", F32, {4});
  b.aten("relu6.default", {pos("self", T("x"))}, "r", F32, {4})
      .metadata.set("stack_trace", "  File \"/m.py\", line 3, in forward\n    return F.relu6(x)\n");
  b.output("r");
  Program p = programOf(b.ep);
  CHECK(errorOf([&] { edge::decomposeWithRules(p, rules); }) ==
        "mine.yaml:1 (rule for aten::relu6, node r at File \"/m.py\", line 3, in forward return F.relu6(x) ): in "
        "expression '$nope': unknown name '$nope'");
}

namespace {
/// r = relu6(x), x a float[4]: the program the rule-error tests lower.
Program relu6Program() {
  GraphBuilder b;
  b.input("x", F32, {4});
  b.aten("relu6.default", {pos("self", T("x"))}, "r", F32, {4});
  b.output("r");
  return programOf(b.ep);
}
} // namespace

TEST_CASE("a rule expression reports the first error reading it meets, syntax errors included", "[edge][rules]") {
  // relu6 -> hardtanh when `when` holds; the error (if any) of evaluating `when`.
  auto whenError = [](const std::string &when) {
    auto rules = edge::DecompositionRules::parse(
        "- match: aten::relu6\n  when: \"" + when +
            "\"\n  steps: [{call: aten::hardtanh, args: {self: $self}, out: out}]\n",
        "mine.yaml");
    Program p = relu6Program();
    std::string error = errorOf([&] { edge::decomposeWithRules(p, rules); });
    auto colon = error.find("): ");
    return colon == std::string::npos ? error : error.substr(colon + 3);
  };
  // What is read before a syntax error is evaluated first, and can fail first.
  CHECK(whenError("$self.size + (1") ==
        "in expression '$self.size + (1': unknown attribute '.size' (shape, dtype, rank)");
  CHECK(whenError("$self.rank + (1") == "in expression '$self.rank + (1': expected ')'");
  CHECK(whenError("[1, 2]['a'") == "in expression '[1, 2]['a'': index must be an int");
  CHECK(whenError("[1, 2][5") == "in expression '[1, 2][5': expected ']'");
  CHECK(whenError("[1, 2][5]") == "in expression '[1, 2][5]': index 5 out of range for 2");
  CHECK(whenError("len([1], 2") == "in expression 'len([1], 2': expected ')'");
  CHECK(whenError("len([1], 2)") == "in expression 'len([1], 2)': len() takes 1 arguments");
  CHECK(whenError("[$nope, (") == "in expression '[$nope, (': unknown name '$nope'");
  CHECK(whenError("[1, 2") == "in expression '[1, 2': expected ']'");
  CHECK(whenError("$self.rank == 1 1") == "in expression '$self.rank == 1 1': unexpected '1'");
  CHECK(whenError("nope + 1") == "in expression 'nope + 1': unknown name 'nope' (values are written $name)");
  CHECK(whenError("'abc") == "in expression ''abc': unterminated string");
  CHECK(whenError("1 + ") == "in expression '1 + ': unexpected end");
  CHECK(whenError("1 + #") == "in expression '1 + #': unexpected '#'");
  // The untaken side of and/or still looks names up and is still parsed.
  CHECK(whenError("true or $nope") == "in expression 'true or $nope': unknown name '$nope'");
  CHECK(whenError("true or (1") == "in expression 'true or (1': expected ')'");
  CHECK(whenError("false and [1][5") == "in expression 'false and [1][5': expected ']'");
  CHECK(whenError("false and [1][5]").empty()); // not evaluated: no range error
  CHECK(whenError("true or $self.size").empty());
  CHECK(whenError("$self.rank == 1").empty());

  // A step the rule never reaches is never read: its syntax error is not reported.
  auto rules = edge::DecompositionRules::parse(
      "- match: aten::relu6\n  when: \"false\"\n  steps: [{call: aten::hardtanh, args: {self: \"$self +\"}, out: out}]\n",
      "mine.yaml");
  Program p = relu6Program();
  CHECK(errorOf([&] { edge::decomposeWithRules(p, rules); }).empty());
  CHECK(targets(graphOf(p)) == std::vector<std::string>{"aten::relu6"});
}

TEST_CASE("rules: refuse states what is not supported, with the rule and node", "[edge][rules]") {
  auto rules = edge::DecompositionRules::parse("- match: aten::relu6\n  when: $self.rank > 1\n"
                                               "  steps: [{call: aten::relu, args: {self: $self}, out: out}]\n"
                                               "- match: aten::relu6\n  refuse: relu6 of a vector is not supported\n",
                                               "mine.yaml");
  Program p = relu6Program();
  CHECK(errorOf([&] { edge::decomposeWithRules(p, rules); }) ==
        "mine.yaml:4 (rule for aten::relu6, node r): relu6 of a vector is not supported");
  CHECK(rules.describe("aten::relu6") ==
        std::vector<std::string>{"mine.yaml:1: when $self.rank > 1 -> aten::relu",
                                 "mine.yaml:4: -> refused: relu6 of a vector is not supported"});
  CHECK(errorOf([] {
          edge::DecompositionRules::parse("- match: aten::relu6\n  refuse: no\n  returns: [$self]\n", "bad.yaml");
        }) == "'bad.yaml': line 1: a rule that refuses has no 'steps' or 'returns'");
  CHECK(errorOf([] { edge::DecompositionRules::parse("- match: aten::relu6\n  refuse: [a, b]\n", "bad.yaml"); }) ==
        "'bad.yaml': line 1: 'refuse' must be the message saying what is not supported");

  // The builtin rule for adaptive_max_pool2d takes equal windows only (values: DecompositionNumbersTest).
  GraphBuilder b;
  b.input("x", F32, {1, 1, 7, 7});
  Node &n = b.aten("adaptive_max_pool2d.default", {pos("self", T("x")), pos("output_size", Argument::ints_({3, 3}))},
                   "pool", F32, {1, 1, 3, 3});
  n.outputs.push_back(T("indices"));
  b.ep.graph.tensorValues.set("indices", meta(ScalarType::Long, {1, 1, 3, 3}));
  b.output("pool");
  Program q = programOf(b.ep);
  std::string error = errorOf([&] { edge::decomposeRules(q); });
  CHECK_THAT(error, Catch::Matchers::StartsWith("lib/Edge/decompositions.yaml:") &&
                        Catch::Matchers::Contains("(rule for aten::adaptive_max_pool2d, node pool): adaptive_max_pool2d "
                                                  "is supported when the input's height and width are multiples of "
                                                  "output_size"));
}
