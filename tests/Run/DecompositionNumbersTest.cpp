//===- tests/Run/DecompositionNumbersTest.cpp - rules checked by value ----===//
//
// Decomposition rules (Edge/decompositions.yaml) whose variants the real
// exports in testdata/ops do not reach (torch.export picks one per case):
// each graph here is one ATen call, lowered by toEdge and run as an edge
// program, a planned program and a .pte, against values worked out by hand.
//
//===----------------------------------------------------------------------===//
#include "Edge/Passes.h"
#include "Emit/Emitter.h"
#include "Plan/PlanPasses.h"
#include "Run/Interpreter.h"
#include "Run/TensorData.h"
#include "Support/Strings.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>

using namespace exir;
using namespace exir::run;
using namespace irtest;

namespace {

constexpr ScalarType F32 = ScalarType::Float;
constexpr ScalarType I64 = ScalarType::Long;

Value tensor(ScalarType dtype, std::vector<int64_t> sizes, std::vector<double> values) {
  Tensor t = Tensor::make(dtype, std::move(sizes));
  fillFromDoubles(t, values);
  return Value::of(std::move(t));
}

/// Lowers the ATen program to Edge and runs it three ways (edge, planned,
/// .pte); all three must give the same outputs, which are returned.
std::vector<std::vector<double>> lowerAndRunAll(const GraphBuilder &b, const std::vector<Value> &inputs) {
  Program edge = programOf(b.ep);
  edge::toEdge(edge, edge::EdgeOptions{});
  for (const Node &n : edge.methods.begin()->second.program.graph.nodes)
    CHECK_THAT(n.target, Catch::Matchers::StartsWith("executorch.exir.dialects.edge.ops.")); // all lowered
  Program planned = edge;
  plan::viewsToAliases(planned);
  plan::toOutVariant(planned);
  plan::planProgram(planned, plan::PlanningOptions{});
  std::vector<std::vector<std::vector<double>>> results;
  std::unique_ptr<Executable> executables[] = {makeGraphExecutable(edge), makeGraphExecutable(planned),
                                                makePteExecutable(emit::emitProgram(planned))};
  for (auto &exe : executables) {
    RunResult r = exe->run("forward", inputs, RunOptions{});
    REQUIRE(r.outputs.size() == b.ep.graph.outputs.size());
    auto &values = results.emplace_back();
    for (const auto &out : r.outputs) values.push_back(toDoubles(out.toTensor()));
  }
  CHECK(results[1] == results[0]);
  CHECK(results[2] == results[0]);
  return results[0];
}

/// lowerAndRunAll for a program with one output.
std::vector<double> lowerAndRun(const GraphBuilder &b, const std::vector<Value> &inputs) {
  return lowerAndRunAll(b, inputs).at(0);
}

void checkClose(const std::vector<double> &got, const std::vector<double> &want) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) CHECK(got[k] == Approx(want[k]).margin(1e-5));
}

/// stack([x, y, z], dim) of three 2x2 tensors holding 1..4, 5..8, 9..12.
std::vector<double> stack3(int64_t dim, const std::vector<int64_t> &outSizes) {
  GraphBuilder b;
  b.input("x", F32, {2, 2}).input("y", F32, {2, 2}).input("z", F32, {2, 2});
  b.aten("stack.default", {pos("tensors", Argument::tensors({"x", "y", "z"})), pos("dim", Argument::integer(dim))},
         "stack", F32, outSizes);
  b.output("stack");
  return lowerAndRun(b, {tensor(F32, {2, 2}, {1, 2, 3, 4}), tensor(F32, {2, 2}, {5, 6, 7, 8}),
                         tensor(F32, {2, 2}, {9, 10, 11, 12})});
}

std::vector<double> maxPool1d(std::vector<NamedArgument> extra, int64_t outLength) {
  GraphBuilder b;
  b.input("x", F32, {1, 1, 7});
  std::vector<NamedArgument> args = {pos("self", T("x"))};
  for (auto &a : extra) args.push_back(a);
  b.aten("max_pool1d.default", args, "pool", F32, {1, 1, outLength});
  b.output("pool");
  return lowerAndRun(b, {tensor(F32, {1, 1, 7}, {1, 5, 2, 8, 3, 0, 4})});
}

} // namespace

TEST_CASE("stack: every position of the new dim, negative ones too", "[run][decompose]") {
  const std::vector<double> dim0 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<double> dim1 = {1, 2, 5, 6, 9, 10, 3, 4, 7, 8, 11, 12};
  const std::vector<double> last = {1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12};
  CHECK(stack3(0, {3, 2, 2}) == dim0);
  CHECK(stack3(-3, {3, 2, 2}) == dim0);
  CHECK(stack3(1, {2, 3, 2}) == dim1);
  CHECK(stack3(-2, {2, 3, 2}) == dim1);
  CHECK(stack3(2, {2, 2, 3}) == last);
  CHECK(stack3(-1, {2, 2, 3}) == last);
}

TEST_CASE("max_pool1d: stride, padding, and the kernel as the default stride", "[run][decompose]") {
  // Padding 1 pads with -inf: windows [-inf 1 5] [5 2 8] [8 3 0] [0 4 -inf].
  CHECK(maxPool1d({pos("kernel_size", Argument::ints_({3})), pos("stride", Argument::ints_({2})),
                   pos("padding", Argument::ints_({1}))},
                  4) == std::vector<double>{5, 8, 8, 4});
  // No stride: windows of 2 every 2, the last element left out.
  CHECK(maxPool1d({pos("kernel_size", Argument::ints_({2}))}, 3) == std::vector<double>{5, 8, 3});
}

TEST_CASE("tril and triu: diagonals, batches", "[run][decompose]") {
  auto run = [](const std::string &op, int64_t diagonal, std::vector<int64_t> sizes) {
    GraphBuilder b;
    b.input("x", F32, sizes);
    b.aten(op + ".default", {pos("self", T("x")), pos("diagonal", Argument::integer(diagonal))}, "out", F32, sizes);
    b.output("out");
    std::vector<double> values;
    for (int k = 1; k <= 12; ++k) values.push_back(k);
    return lowerAndRun(b, {tensor(F32, sizes, values)});
  };
  CHECK(run("tril", -1, {3, 4}) == std::vector<double>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  CHECK(run("triu", 1, {3, 4}) == std::vector<double>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
  CHECK(run("tril", 0, {2, 2, 3}) == std::vector<double>{1, 0, 0, 4, 5, 0, 7, 0, 0, 10, 11, 0});
  CHECK(run("triu", 0, {2, 2, 3}) == std::vector<double>{1, 2, 3, 0, 5, 6, 7, 8, 9, 0, 11, 12});
}

TEST_CASE("std: unbiased, biased and an explicit correction", "[run][decompose]") {
  // Rows [1 2 3] and [4 6 8]: squared deviations sum to 2 and 8.
  auto run = [](const std::string &op, std::vector<NamedArgument> extra) {
    GraphBuilder b;
    b.input("x", F32, {2, 3});
    std::vector<NamedArgument> args = {pos("self", T("x")), pos("dim", Argument::ints_({1}))};
    for (auto &a : extra) args.push_back(a);
    b.aten(op, args, "out", F32, {2, 1});
    b.output("out");
    return lowerAndRun(b, {tensor(F32, {2, 3}, {1, 2, 3, 4, 6, 8})});
  };
  auto keep = kw("keepdim", Argument::boolean(true));
  checkClose(run("std.dim", {pos("unbiased", Argument::boolean(true)), keep}), {1, 2});
  checkClose(run("std.dim", {pos("unbiased", Argument::boolean(false)), keep}), {std::sqrt(2.0 / 3), std::sqrt(8.0 / 3)});
  checkClose(run("std.correction", {kw("correction", Argument::integer(2)), keep}), {std::sqrt(2.0), std::sqrt(8.0)});
}

TEST_CASE("all.dim on a float tensor: zero is false", "[run][decompose]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.aten("all.dim", {pos("self", T("x")), pos("dim", Argument::integer(-1)), pos("keepdim", Argument::boolean(true))},
         "out", ScalarType::Bool, {2, 1});
  b.output("out");
  CHECK(lowerAndRun(b, {tensor(F32, {2, 3}, {1, 2, 0, 3, -1, 5})}) == std::vector<double>{0, 1});
}

TEST_CASE("eye: the identity in the requested dtype", "[run][decompose]") {
  GraphBuilder b;
  b.input("x", I64, {3, 3});
  b.aten("eye.default", {pos("n", Argument::integer(3)), kw("dtype", Argument::scalarType(I64))}, "eye", I64, {3, 3});
  b.aten("mul.Tensor", {pos("self", T("eye")), pos("other", T("x"))}, "out", I64, {3, 3});
  b.output("out");
  CHECK(lowerAndRun(b, {tensor(I64, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}) ==
        std::vector<double>{1, 0, 0, 0, 5, 0, 0, 0, 9});
}

TEST_CASE("instance_norm: per (sample, channel) statistics, with and without affine", "[run][decompose]") {
  // Channel 0 [1 2 3]: mean 2, variance 2/3; channel 1 [2 4 6]: mean 4, variance 8/3.
  // Both normalize to [-a, 0, a], a = 1 / sqrt(2/3 + eps) (channel 1 scaled by 2: the same up to eps).
  const double eps = 1e-5, a0 = 1 / std::sqrt(2.0 / 3 + eps), a1 = 2 / std::sqrt(8.0 / 3 + eps);
  auto run = [&](bool affine) {
    GraphBuilder b;
    if (affine) b.input("p_weight", F32, {2}).input("p_bias", F32, {2}); // inputs: no constant data needed
    b.input("x", F32, {1, 2, 3});
    b.aten("instance_norm.default",
           {pos("input", T("x")), pos("weight", affine ? T("p_weight") : Argument::none()),
            pos("bias", affine ? T("p_bias") : Argument::none()), pos("running_mean", Argument::none()),
            pos("running_var", Argument::none()), pos("use_input_stats", Argument::boolean(true)),
            pos("momentum", Argument::real(0.1)), pos("eps", Argument::real(eps)),
            pos("cudnn_enabled", Argument::boolean(false))},
           "out", F32, {1, 2, 3});
    b.output("out");
    std::vector<Value> inputs;
    if (affine) inputs = {tensor(F32, {2}, {2, 3}), tensor(F32, {2}, {1, -1})};
    inputs.push_back(tensor(F32, {1, 2, 3}, {1, 2, 3, 2, 4, 6}));
    return lowerAndRun(b, inputs);
  };
  checkClose(run(false), {-a0, 0, a0, -a1, 0, a1});
  checkClose(run(true), {1 - 2 * a0, 1, 1 + 2 * a0, -1 - 3 * a1, -1, -1 + 3 * a1});
}

TEST_CASE("conv with padding='same' (even kernels pad one more on the right) and 'valid'", "[run][decompose]") {
  auto run = [](const std::string &op, std::vector<int64_t> xs, std::vector<double> x, std::vector<int64_t> ws,
                std::vector<double> w, const std::string &padding, int64_t dilation, std::vector<int64_t> outs) {
    GraphBuilder b;
    b.input("w", F32, ws).input("x", F32, xs); // the weight as an input: no constant data needed
    b.aten(op + ".padding",
           {pos("input", T("x")), pos("weight", T("w")), pos("padding", Argument::string(padding)),
            pos("dilation", Argument::ints_({dilation}))},
           "conv", F32, outs);
    b.output("conv");
    return lowerAndRun(b, {tensor(F32, ws, w), tensor(F32, xs, x)});
  };
  const std::vector<double> x = {1, 2, 3, 4, 5};
  // Kernel [1 1]: [1 2 3 4 5] padded to [1 2 3 4 5 0].
  CHECK(run("conv1d", {1, 1, 5}, x, {1, 1, 2}, {1, 1}, "same", 1, {1, 1, 5}) == std::vector<double>{3, 5, 7, 9, 5});
  // Dilation 2: a window of 3, one zero on each side: x[i-1] + x[i+1].
  CHECK(run("conv1d", {1, 1, 5}, x, {1, 1, 2}, {1, 1}, "same", 2, {1, 1, 5}) == std::vector<double>{2, 4, 6, 8, 4});
  CHECK(run("conv1d", {1, 1, 5}, x, {1, 1, 2}, {1, 1}, "valid", 1, {1, 1, 4}) == std::vector<double>{3, 5, 7, 9});
  // 2-D, a 2x1 kernel: only the height gets the extra row (below).
  CHECK(run("conv2d", {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}, {1, 1, 2, 1}, {1, 1}, "same", 1, {1, 1, 2, 3}) ==
        std::vector<double>{5, 7, 9, 4, 5, 6});
}

TEST_CASE("adaptive_max_pool2d: equal windows, values and flat indices", "[run][decompose]") {
  // The refusal of unequal windows: tests/Edge/RealProgramTest.cpp.
  auto graph = [](std::vector<int64_t> xs, std::vector<int64_t> outputSize) {
    GraphBuilder b;
    b.input("x", F32, xs);
    std::vector<int64_t> os = {xs[0], xs[1], outputSize[0], outputSize[1]}; // 4-D input
    Node &n = b.aten("adaptive_max_pool2d.default", {pos("self", T("x")), pos("output_size", Argument::ints_(outputSize))},
                     "pool", F32, os);
    n.outputs.push_back(T("indices"));
    b.ep.graph.tensorValues.set("indices", meta(I64, os));
    b.output("pool").output("indices");
    return b;
  };
  // 4x6 -> 2x3: 2x2 windows over x[k] = 7k mod 24 (each value once).
  std::vector<double> x;
  for (int k = 0; k < 24; ++k) x.push_back((7 * k) % 24);
  auto outs = lowerAndRunAll(graph({1, 1, 4, 6}, {2, 3}), {tensor(F32, {1, 1, 4, 6}, x)});
  CHECK(outs.at(0) == std::vector<double>{18, 21, 22, 19, 20, 23});
  CHECK(outs.at(1) == std::vector<double>{6, 3, 10, 13, 20, 17}); // flat positions in the 4x6 plane
  // Global pooling of a 3-D (unbatched) input: one window per plane.
  GraphBuilder g;
  g.input("x", F32, {2, 2, 3});
  Node &n = g.aten("adaptive_max_pool2d.default", {pos("self", T("x")), pos("output_size", Argument::ints_({1, 1}))},
                   "pool", F32, {2, 1, 1});
  n.outputs.push_back(T("indices"));
  g.ep.graph.tensorValues.set("indices", meta(I64, {2, 1, 1}));
  g.output("pool").output("indices");
  auto global = lowerAndRunAll(g, {tensor(F32, {2, 2, 3}, {1, 9, 2, 3, 4, 5, -1, -2, -3, -4, -5, -6})});
  CHECK(global.at(0) == std::vector<double>{9, -1});
  CHECK(global.at(1) == std::vector<double>{1, 0});
}

TEST_CASE("rnn_relu: two layers, batch first, biases, a given h0", "[run][decompose]") {
  GraphBuilder b;
  b.input("x", F32, {1, 2, 1}).input("h0", F32, {2, 1, 2});
  // Weights as inputs: no constant data needed.
  b.input("w0", F32, {2, 1}).input("u0", F32, {2, 2}).input("bi0", F32, {2}).input("bh0", F32, {2});
  b.input("w1", F32, {2, 2}).input("u1", F32, {2, 2}).input("bi1", F32, {2}).input("bh1", F32, {2});
  Node &n = b.aten("rnn_relu.input",
                   {pos("input", T("x")), pos("hx", T("h0")),
                    pos("params", Argument::tensors({"w0", "u0", "bi0", "bh0", "w1", "u1", "bi1", "bh1"})),
                    pos("has_biases", Argument::boolean(true)), pos("num_layers", Argument::integer(2)),
                    pos("dropout", Argument::real(0)), pos("train", Argument::boolean(false)),
                    pos("bidirectional", Argument::boolean(false)), pos("batch_first", Argument::boolean(true))},
                   "out", F32, {1, 2, 2});
  n.outputs.push_back(T("hn"));
  b.ep.graph.tensorValues.set("hn", meta(F32, {2, 1, 2}));
  b.output("out").output("hn");
  // Layer 0: h = relu(w0 x + bi0 + u0 h + bh0) from [0.5, -1]: [2, 0], then [0.5, 3].
  // Layer 1 on those, from [1, 0]: [1, 0], then [2.5, 1].
  auto outs = lowerAndRunAll(
      b, {tensor(F32, {1, 2, 1}, {1, -2}), tensor(F32, {2, 1, 2}, {0.5, -1, 1, 0}), tensor(F32, {2, 1}, {1, -1}),
          tensor(F32, {2, 2}, {1, 0, 0, 2}), tensor(F32, {2}, {0.5, 0}), tensor(F32, {2}, {0, 1}),
          tensor(F32, {2, 2}, {1, 1, -1, 0}), tensor(F32, {2, 2}, {0, 1, 1, 0}), tensor(F32, {2}, {0, 0}),
          tensor(F32, {2}, {-1, 0.5})});
  CHECK(outs.at(0) == std::vector<double>{1, 0, 2.5, 1});
  CHECK(outs.at(1) == std::vector<double>{0.5, 3, 2.5, 1});
}

namespace {
/// A recurrent op and the shapes of one call, for the bidirectional checks.
struct RnnCase {
  std::string op; // "lstm", "gru", "rnn_tanh"
  int64_t layers = 1;
  bool bidirectional = false;
  int64_t steps = 3, batch = 2, inputSize = 2, hidden = 3;
  int64_t gates() const { return op == "lstm" ? 4 : op == "gru" ? 3 : 1; }
  int64_t directions() const { return bidirectional ? 2 : 1; }
  size_t states() const { return op == "lstm" ? 2 : 1; }
  /// Sizes of the weights in torch's order: per layer, per direction, w_ih, w_hh, b_ih, b_hh.
  std::vector<std::vector<int64_t>> paramSizes() const {
    std::vector<std::vector<int64_t>> out;
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t d = 0; d < directions(); ++d) {
        int64_t in = l == 0 ? inputSize : directions() * hidden;
        out.push_back({gates() * hidden, in});
        out.push_back({gates() * hidden, hidden});
        out.push_back({gates() * hidden});
        out.push_back({gates() * hidden});
      }
    return out;
  }
};

/// Runs `op.input(x, states, params)` (edge, planned and .pte must agree):
/// the per-step output, then the final states.
std::vector<std::vector<double>> runRnn(const RnnCase &c, const std::vector<double> &x,
                                        const std::vector<std::vector<double>> &states,
                                        const std::vector<std::vector<double>> &params) {
  GraphBuilder b;
  std::vector<int64_t> xs = {c.steps, c.batch, c.inputSize};
  std::vector<int64_t> ss = {c.layers * c.directions(), c.batch, c.hidden};
  std::vector<Value> inputs = {tensor(F32, xs, x)};
  b.input("x", F32, xs);
  std::vector<std::string> stateNames = {"h0", "c0"};
  stateNames.resize(c.states());
  for (size_t s = 0; s < c.states(); ++s) {
    b.input(stateNames[s], F32, ss);
    inputs.push_back(tensor(F32, ss, states.at(s)));
  }
  std::vector<std::string> paramNames;
  auto sizes = c.paramSizes();
  for (size_t k = 0; k < sizes.size(); ++k) {
    paramNames.push_back("p" + std::to_string(k));
    b.input(paramNames.back(), F32, sizes[k]);
    inputs.push_back(tensor(F32, sizes[k], params.at(k)));
  }
  Argument hx = c.states() == 2 ? Argument::tensors(stateNames) : T("h0");
  Node &n = b.aten(c.op + ".input",
                   {pos("input", T("x")), pos("hx", hx), pos("params", Argument::tensors(paramNames)),
                    pos("has_biases", Argument::boolean(true)), pos("num_layers", Argument::integer(c.layers)),
                    pos("dropout", Argument::real(0)), pos("train", Argument::boolean(false)),
                    pos("bidirectional", Argument::boolean(c.bidirectional)), pos("batch_first", Argument::boolean(false))},
                   "out", F32, {c.steps, c.batch, c.directions() * c.hidden});
  b.output("out");
  for (size_t s = 0; s < c.states(); ++s) {
    std::string name = s == 0 ? "hn" : "cn";
    n.outputs.push_back(T(name));
    b.ep.graph.tensorValues.set(name, meta(F32, ss));
  }
  for (size_t s = 0; s < c.states(); ++s) b.output(s == 0 ? "hn" : "cn");
  return lowerAndRunAll(b, inputs);
}

/// Deterministic values in [-1, 1).
std::vector<double> noise(size_t count, uint32_t &seed) {
  std::vector<double> out;
  for (size_t k = 0; k < count; ++k) {
    seed = seed * 1664525u + 1013904223u;
    out.push_back(double(seed >> 8) / double(1u << 23) - 1.0);
  }
  return out;
}

size_t count(const std::vector<int64_t> &sizes) {
  size_t n = 1;
  for (int64_t s : sizes) n *= size_t(s);
  return n;
}
} // namespace

TEST_CASE("bidirectional rnn/gru/lstm: each direction is the one-way op, the reverse one on reversed time",
          "[run][decompose][rnn]") {
  for (std::string op : {"rnn_tanh", "gru", "lstm"}) {
    CAPTURE(op);
    uint32_t seed = 7;
    RnnCase bi{op, 1, true};
    RnnCase one{op, 1, false};
    const int64_t T = bi.steps, B = bi.batch, H = bi.hidden;
    std::vector<double> x = noise(count({T, B, bi.inputSize}), seed);
    std::vector<std::vector<double>> states, params;
    for (size_t s = 0; s < bi.states(); ++s) states.push_back(noise(size_t(2 * B * H), seed));
    for (const auto &sizes : bi.paramSizes()) params.push_back(noise(count(sizes), seed));
    auto both = runRnn(bi, x, states, params);

    // Direction d alone: its half of the states and weights 4d..4d+3; the reverse one reads x backwards.
    for (int d = 0; d < 2; ++d) {
      CAPTURE(d);
      std::vector<double> xd = x;
      if (d == 1)
        for (int64_t t = 0; t < T; ++t)
          std::copy_n(x.begin() + (T - 1 - t) * B * bi.inputSize, B * bi.inputSize, xd.begin() + t * B * bi.inputSize);
      std::vector<std::vector<double>> sd, pd(params.begin() + 4 * d, params.begin() + 4 * d + 4);
      for (const auto &s : states) sd.emplace_back(s.begin() + d * B * H, s.begin() + (d + 1) * B * H);
      auto alone = runRnn(one, xd, sd, pd);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t n = 0; n < B; ++n)
          for (int64_t j = 0; j < H; ++j) {
            int64_t ta = d == 0 ? t : T - 1 - t;
            CHECK(both[0][size_t((t * B + n) * 2 * H + d * H + j)] == Approx(alone[0][size_t((ta * B + n) * H + j)]));
          }
      for (size_t s = 0; s < bi.states(); ++s)
        for (int64_t k = 0; k < B * H; ++k)
          CHECK(both[1 + s][size_t(d * B * H + k)] == Approx(alone[1 + s][size_t(k)]));
    }

    // Two bidirectional layers are the second layer run on the first one's output.
    RnnCase two{op, 2, true};
    RnnCase second{op, 1, true, T, B, 2 * H, H};
    std::vector<std::vector<double>> states2, params2 = params;
    for (size_t s = 0; s < bi.states(); ++s) states2.push_back(noise(size_t(4 * B * H), seed));
    auto sizes2 = two.paramSizes();
    for (size_t k = params.size(); k < sizes2.size(); ++k) params2.push_back(noise(count(sizes2[k]), seed));
    auto stacked = runRnn(two, x, states2, params2);
    std::vector<std::vector<double>> s0, s1;
    for (const auto &s : states2) {
      s0.emplace_back(s.begin(), s.begin() + 2 * B * H);
      s1.emplace_back(s.begin() + 2 * B * H, s.end());
    }
    auto first = runRnn(bi, x, s0, params);
    auto top = runRnn(second, first[0], s1, std::vector<std::vector<double>>(params2.begin() + 8, params2.end()));
    REQUIRE(stacked[0].size() == top[0].size());
    for (size_t k = 0; k < top[0].size(); ++k) CHECK(stacked[0][k] == Approx(top[0][k]));
    for (size_t s = 0; s < bi.states(); ++s) {
      std::vector<double> want = first[1 + s];
      want.insert(want.end(), top[1 + s].begin(), top[1 + s].end());
      CHECK(stacked[1 + s] == want);
    }
  }
}

TEST_CASE("small rules: min, mse_loss, rsub, clamp_min/max, square, prelu, masked_fill, logit, pixel_unshuffle",
          "[run][decompose]") {
  constexpr ScalarType B8 = ScalarType::Bool;
  // One call on inputs x (and y, m: given by `inputs`' sizes), output `out`.
  auto run = [](const std::string &op, std::vector<NamedArgument> args, std::vector<std::pair<std::string, Value>> inputs,
                ScalarType outType, std::vector<int64_t> outSizes) {
    GraphBuilder b;
    std::vector<Value> values;
    for (auto &[name, v] : inputs) {
      const Tensor &t = v.toTensor();
      b.input(name, t.dtype, t.sizes);
      values.push_back(v);
    }
    b.aten(op, std::move(args), "out", outType, outSizes);
    b.output("out");
    return lowerAndRun(b, values);
  };
  Value x6 = tensor(F32, {2, 3}, {3, -1, 4, 1, -5, 9});
  CHECK(run("min.default", {pos("self", T("x"))}, {{"x", x6}}, F32, {}) == std::vector<double>{-5});

  Value a = tensor(F32, {4}, {1, 2, 3, 4}), t = tensor(F32, {4}, {0, 2, 5, 4});
  auto mse = [&](int64_t reduction, std::vector<int64_t> outSizes) {
    return run("mse_loss.default", {pos("self", T("x")), pos("target", T("y")), pos("reduction", Argument::integer(reduction))},
               {{"x", a}, {"y", t}}, F32, outSizes);
  };
  CHECK(mse(0, {4}) == std::vector<double>{1, 0, 4, 0});
  CHECK(mse(1, {}) == std::vector<double>{1.25});
  CHECK(mse(2, {}) == std::vector<double>{5});

  CHECK(run("rsub.Tensor", {pos("self", T("x")), pos("other", T("y")), kw("alpha", Argument::integer(2))},
            {{"x", tensor(F32, {2}, {1, 2})}, {"y", tensor(F32, {2}, {10, 20})}}, F32, {2}) == std::vector<double>{8, 16});
  Value c = tensor(F32, {3}, {-1, 0.5, 2});
  CHECK(run("clamp_min.default", {pos("self", T("x")), pos("min", Argument::integer(0))}, {{"x", c}}, F32, {3}) ==
        std::vector<double>{0, 0.5, 2});
  CHECK(run("clamp_max.default", {pos("self", T("x")), pos("max", Argument::real(1))}, {{"x", c}}, F32, {3}) ==
        std::vector<double>{-1, 0.5, 1});
  CHECK(run("square.default", {pos("self", T("x"))}, {{"x", tensor(F32, {2}, {-3, 2})}}, F32, {2}) ==
        std::vector<double>{9, 4});
  // prelu's weight comes viewed to [C, 1]: channel 0 scales by 0.5, channel 1 by 0.25.
  CHECK(run("_prelu_kernel.default", {pos("self", T("x")), pos("weight", T("y"))},
            {{"x", tensor(F32, {1, 2, 2}, {-1, 2, -3, 4})}, {"y", tensor(F32, {2, 1}, {0.5, 0.25})}}, F32, {1, 2, 2}) ==
        std::vector<double>{-0.5, 2, -0.75, 4});

  Value mask = tensor(B8, {3}, {1, 0, 1});
  auto fill = [&](Value self, Value value, ScalarType outType) {
    return run("masked_fill.Tensor", {pos("self", T("x")), pos("mask", T("m")), pos("value", T("v"))},
               {{"x", self}, {"m", mask}, {"v", value}}, outType, {3});
  };
  CHECK(fill(tensor(F32, {3}, {1, 2, 3}), tensor(F32, {}, {7}), F32) == std::vector<double>{7, 2, 7});
  CHECK(fill(tensor(F32, {3}, {1, 2, 3}), tensor(I64, {}, {7}), F32) == std::vector<double>{7, 2, 7});
  // The value takes self's dtype: 2.5 in an int64 tensor is 2.
  CHECK(fill(tensor(I64, {3}, {1, 2, 3}), tensor(F32, {}, {2.5}), I64) == std::vector<double>{2, 2, 2});

  checkClose(run("logit.default", {pos("self", T("x"))}, {{"x", tensor(F32, {2}, {0.5, 0.75})}}, F32, {2}),
             {0, std::log(3.0)});
  checkClose(run("logit.default", {pos("self", T("x")), pos("eps", Argument::real(0.1))},
                 {{"x", tensor(F32, {2}, {0, 1})}}, F32, {2}),
             {std::log(1.0 / 9), std::log(9.0)});

  // [1, 1, 2, 4] -> [1, 4, 1, 2]: channel i*2 + j holds x[i::2, j::2].
  CHECK(run("pixel_unshuffle.default", {pos("self", T("x")), pos("downscale_factor", Argument::integer(2))},
            {{"x", tensor(F32, {1, 1, 2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})}}, F32, {1, 4, 1, 2}) ==
        std::vector<double>{0, 2, 1, 3, 4, 6, 5, 7});

  // glu: the first half times the sigmoid of the second, along dim (default -1).
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  Value g = tensor(F32, {2, 4}, {1, 2, 0, 3, -1, 4, 2, -2});
  checkClose(run("glu.default", {pos("self", T("x"))}, {{"x", g}}, F32, {2, 2}),
             {1 * sigmoid(0), 2 * sigmoid(3), -1 * sigmoid(2), 4 * sigmoid(-2)});
  checkClose(run("glu.default", {pos("self", T("x")), pos("dim", Argument::integer(0))}, {{"x", g}}, F32, {1, 4}),
             {1 * sigmoid(-1), 2 * sigmoid(4), 0 * sigmoid(2), 3 * sigmoid(-2)});
  // view_as / expand_as take other's shape; empty_like / new_empty are zeros here.
  Value six = tensor(F32, {6}, {1, 2, 3, 4, 5, 6});
  CHECK(run("view_as.default", {pos("self", T("x")), pos("other", T("y"))}, {{"x", six}, {"y", x6}}, F32, {2, 3}) ==
        std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(run("expand_as.default", {pos("self", T("x")), pos("other", T("y"))},
            {{"x", tensor(F32, {2, 1}, {7, 8})}, {"y", x6}}, F32, {2, 3}) == std::vector<double>{7, 7, 7, 8, 8, 8});
  CHECK(run("empty_like.default", {pos("self", T("x"))}, {{"x", x6}}, F32, {2, 3}) == std::vector<double>(6, 0));
  CHECK(run("new_empty.default", {pos("self", T("x")), pos("size", Argument::ints_({2, 2}))}, {{"x", x6}}, F32, {2, 2}) ==
        std::vector<double>(4, 0));
  // prelu (what nn.PReLU calls): a per-channel weight is viewed to broadcast over dim 1; one weight scales all.
  Value nchw = tensor(F32, {1, 2, 1, 2}, {-1, 2, -3, 4});
  CHECK(run("prelu.default", {pos("self", T("x")), pos("weight", T("y"))}, {{"x", nchw}, {"y", tensor(F32, {2}, {0.5, 0.25})}},
            F32, {1, 2, 1, 2}) == std::vector<double>{-0.5, 2, -0.75, 4});
  CHECK(run("prelu.default", {pos("self", T("x")), pos("weight", T("y"))}, {{"x", nchw}, {"y", tensor(F32, {1}, {0.5})}},
            F32, {1, 2, 1, 2}) == std::vector<double>{-0.5, 2, -1.5, 4});

  // An odd size is refused by the rule that follows, with its message.
  CHECK_THROWS_WITH(run("glu.default", {pos("self", T("x"))}, {{"x", tensor(F32, {3}, {1, 2, 3})}}, F32, {1}),
                    Catch::Contains("whose size must be even"));
}

TEST_CASE("in-place ops of training IR compute what their functional ops do", "[run][decompose][functionalize]") {
  constexpr ScalarType B8 = ScalarType::Bool, I64 = ScalarType::Long;
  Value mixed = tensor(F32, {2, 3}, {-1.5, 0.25, 2, -3, 0.5, 4.5});
  Value positive = tensor(F32, {2, 3}, {0.5, 1.5, 2, 3, 0.25, 4});
  std::vector<std::pair<std::string, Value>> maskIn = {{"m", tensor(B8, {2, 3}, {1, 0, 0, 1, 1, 0})}};
  std::vector<std::pair<std::string, Value>> scatterIn = {{"i", tensor(I64, {1, 3}, {1, 0, 1})},
                                                          {"s", tensor(F32, {1, 3}, {10, 20, 30})}};
  struct Case {
    std::string op; // the in-place overload
    std::vector<NamedArgument> extra;
    std::vector<std::pair<std::string, Value>> inputs; // beside x
    bool positiveOnly = false;
    std::string functional = ""; // the functional op, where not the name without '_'
  };
  std::vector<Case> cases = {
      {"fill_.Scalar", {pos("value", Argument::real(2.5))}, {}},
      {"zero_.default", {}, {}},
      {"sub_.Scalar", {pos("other", Argument::real(1.5))}, {}},
      {"masked_fill_.Scalar", {pos("mask", T("m")), pos("value", Argument::real(7))}, maskIn},
      {"masked_fill_.Tensor", {pos("mask", T("m")), pos("value", T("v"))},
       {maskIn[0], {"v", tensor(F32, {}, {-8})}}},
      {"clamp_min_.default", {pos("min", Argument::real(0))}, {}},
      {"clamp_max_.default", {pos("max", Argument::real(1))}, {}},
      {"leaky_relu_.default", {pos("negative_slope", Argument::real(0.2))}, {}},
      {"elu_.default", {}, {}},
      {"exp_.default", {}, {}},
      {"neg_.default", {}, {}},
      {"abs_.default", {}, {}},
      {"floor_.default", {}, {}},
      {"round_.default", {}, {}},
      {"erf_.default", {}, {}},
      {"mish_.default", {}, {}},
      {"sqrt_.default", {}, {}, true},
      {"rsqrt_.default", {}, {}, true},
      {"log_.default", {}, {}, true},
      {"scatter_.src", {pos("dim", Argument::integer(0)), pos("index", T("i")), pos("src", T("s"))}, scatterIn},
      {"scatter_.value", {pos("dim", Argument::integer(0)), pos("index", T("i")), pos("value", Argument::real(9))},
       {scatterIn[0]}},
      {"scatter_add_.default", {pos("dim", Argument::integer(1)), pos("index", T("i")), pos("src", T("s"))}, scatterIn},
      {"pow_.Scalar", {pos("exponent", Argument::real(2))}, {}, false, "pow.Tensor_Scalar"},
      {"pow_.Tensor", {pos("exponent", T("e"))}, {{"e", tensor(F32, {3}, {2, 0.5, 3})}}, true, "pow.Tensor_Tensor"},
      {"fill_.Tensor", {pos("value", T("v"))}, {{"v", tensor(F32, {}, {-8})}}},
      {"fill_.Tensor", {pos("value", T("v"))}, {{"v", tensor(I64, {}, {3})}}},
  };
  for (const Case &c : cases) {
    INFO(c.op);
    Value x = c.positiveOnly ? positive : mixed;
    // The in-place op writes a clone of x (an intermediate, so no input
    // mutation); the reference graph calls the functional op on x.
    auto build = [&](bool inPlace) {
      GraphBuilder b;
      b.input("x", F32, {2, 3});
      for (const auto &[name, v] : c.inputs) b.input(name, v.toTensor().dtype, v.toTensor().sizes);
      std::string self = "x";
      if (inPlace) {
        b.aten("clone.default", {pos("self", T("x"))}, "c", F32, {2, 3});
        self = "c";
      }
      std::vector<NamedArgument> args = {pos("self", T(self))};
      args.insert(args.end(), c.extra.begin(), c.extra.end());
      std::string op = c.op;
      if (!inPlace) op = c.functional.empty() ? op.erase(op.find("_."), 1) : c.functional;
      b.aten(op, args, "r", F32, {2, 3});
      b.output("r");
      return b;
    };
    std::vector<Value> values = {x};
    for (const auto &[name, v] : c.inputs) values.push_back(v);
    std::vector<double> inPlace = lowerAndRun(build(true), values), functional = lowerAndRun(build(false), values);
    checkClose(inPlace, functional);
    CHECK(inPlace != toDoubles(x.toTensor())); // the op did something
    // fill has no kernel of its own to compare with: both sides ran its rule.
    if (c.op == "fill_.Tensor") CHECK(inPlace == std::vector<double>(6, toDoubles(values.back().toTensor())[0]));
    if (c.op == "pow_.Scalar") CHECK(inPlace == std::vector<double>{2.25, 0.0625, 4, 9, 0.25, 20.25});
  }
}

namespace {

/// einsum by its definition (explicit "->", no ellipsis): every assignment of
/// the letters, the product of the operands' elements summed into the output's.
std::vector<double> einsumByDefinition(const std::string &equation, const std::vector<std::vector<int64_t>> &shapes,
                                       const std::vector<std::vector<double>> &data) {
  size_t arrow = equation.find("->");
  std::vector<std::string> specs;
  std::string lhs = equation.substr(0, arrow), out = equation.substr(arrow + 2);
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    specs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::map<char, int64_t> size;
  for (size_t k = 0; k < specs.size(); ++k)
    for (size_t d = 0; d < specs[k].size(); ++d) size[specs[k][d]] = shapes[k][d];
  std::string letters;
  for (auto &[c, n] : size) letters += c;
  auto offset = [&](const std::string &spec, const std::vector<int64_t> &shape, std::map<char, int64_t> &at) {
    int64_t o = 0;
    for (size_t d = 0; d < spec.size(); ++d) o = o * (shape.empty() ? size[spec[d]] : shape[d]) + at[spec[d]];
    return o;
  };
  int64_t outCount = 1;
  for (char c : out) outCount *= size[c];
  std::vector<double> result(size_t(outCount), 0);
  std::map<char, int64_t> at;
  for (char c : letters) at[c] = 0;
  for (;;) {
    double p = 1;
    for (size_t k = 0; k < specs.size(); ++k) p *= data[k][size_t(offset(specs[k], shapes[k], at))];
    result[size_t(offset(out, {}, at))] += p;
    size_t i = 0;
    for (; i < letters.size(); ++i) {
      if (++at[letters[i]] < size[letters[i]]) break;
      at[letters[i]] = 0;
    }
    if (i == letters.size()) break;
  }
  return result;
}

std::vector<double> lowerEinsum(const std::string &equation, const std::vector<std::vector<int64_t>> &shapes,
                                const std::vector<std::vector<double>> &data, const std::vector<int64_t> &outSizes) {
  GraphBuilder b;
  std::vector<std::string> names;
  std::vector<Value> values;
  for (size_t k = 0; k < shapes.size(); ++k) {
    names.push_back("t" + std::to_string(k));
    b.input(names.back(), F32, shapes[k]);
    values.push_back(tensor(F32, shapes[k], data[k]));
  }
  b.aten("einsum.default", {pos("equation", Argument::string(equation)), pos("tensors", Argument::tensors(names))}, "out",
         F32, outSizes);
  b.output("out");
  return lowerAndRun(b, values);
}

/// lowerEinsum with the dims of `symbolic`'s letters symbolic (explicit "->",
/// no ellipsis): each such letter its own symbol, bounded a little above the
/// size the inputs have, so the lowering cannot know it.
std::vector<double> lowerEinsumSymbolic(const std::string &equation, const std::vector<std::vector<int64_t>> &shapes,
                                        const std::vector<std::vector<double>> &data,
                                        const std::vector<int64_t> &outSizes, const std::string &symbolic) {
  GraphBuilder b;
  size_t arrow = equation.find("->");
  std::vector<std::string> specs = splitFields(equation.substr(0, arrow), ',');
  auto symbolize = [&](const std::string &value, const std::string &letters) {
    TensorMeta m = *b.ep.graph.tensorValues.find(value);
    for (size_t d = 0; d < letters.size(); ++d)
      if (size_t k = symbolic.find(letters[d]); k != std::string::npos) {
        std::string symbol = "s" + std::to_string(k);
        m.sizes[d] = SymInt::symbol(symbol);
        RangeConstraint range;
        range.minVal = 1;
        range.maxVal = 9;
        b.ep.rangeConstraints.set(symbol, range);
      }
    b.ep.graph.tensorValues.set(value, m);
  };
  std::vector<std::string> names;
  std::vector<Value> values;
  for (size_t k = 0; k < shapes.size(); ++k) {
    names.push_back("t" + std::to_string(k));
    b.input(names.back(), F32, shapes[k]);
    symbolize(names.back(), specs[k]);
    values.push_back(tensor(F32, shapes[k], data[k]));
  }
  b.aten("einsum.default", {pos("equation", Argument::string(equation)), pos("tensors", Argument::tensors(names))}, "out",
         F32, outSizes);
  symbolize("out", equation.substr(arrow + 2));
  b.output("out");
  return lowerAndRun(b, values);
}

} // namespace

TEST_CASE("einsum with symbolic sizes multiplies broadcast operands and sums", "[run][decompose][einsum]") {
  // Rotary embeddings' outer product over a dynamic sequence length.
  CHECK(lowerEinsumSymbolic("i,j->ij", {{2}, {3}}, {{1, 2}, {1, 10, 100}}, {2, 3}, "i") ==
        std::vector<double>{1, 10, 100, 2, 20, 200});
  CHECK(lowerEinsumSymbolic("ij,jk->ik", {{2, 2}, {2, 2}}, {{1, 2, 3, 4}, {5, 6, 7, 8}}, {2, 2}, "ij") ==
        std::vector<double>{19, 22, 43, 50});
  // One operand: a transpose keeps its values, a full sum adds them up.
  CHECK(lowerEinsumSymbolic("ij->ji", {{2, 3}}, {{1, 2, 3, 4, 5, 6}}, {3, 2}, "i") ==
        std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(lowerEinsumSymbolic("ij->", {{2, 3}}, {{1, 2, 3, 4, 5, 6}}, {}, "j") == std::vector<double>{21});
  // Attention-shaped, with the query and key lengths dynamic, against the definition.
  std::vector<std::vector<int64_t>> shapes = {{1, 2, 3, 4}, {1, 2, 5, 4}};
  std::vector<std::vector<double>> data(2);
  double v = 0.5;
  for (size_t k = 0; k < 2; ++k)
    for (int64_t i = 0; i < shapes[k][1] * shapes[k][2] * shapes[k][3]; ++i, v = v * 1.7 - std::floor(v * 1.7) - 0.3)
      data[k].push_back(v);
  checkClose(lowerEinsumSymbolic("bhqd,bhkd->bhqk", shapes, data, {1, 2, 3, 5}, "qk"),
             einsumByDefinition("bhqd,bhkd->bhqk", shapes, data));
  checkClose(lowerEinsumSymbolic("bhqd,bhkd->bqhk", shapes, data, {1, 3, 2, 5}, "k"),
             einsumByDefinition("bhqd,bhkd->bqhk", shapes, data));
}

TEST_CASE("einsum lowers to permute, sum and bmm, and computes its definition", "[run][decompose][einsum]") {
  // Hand values: a matrix product and an outer product (rotary embeddings' "i,j->ij").
  CHECK(lowerEinsum("ij,jk->ik", {{2, 2}, {2, 2}}, {{1, 2, 3, 4}, {5, 6, 7, 8}}, {2, 2}) ==
        std::vector<double>{19, 22, 43, 50});
  CHECK(lowerEinsum("i,j->ij", {{2}, {3}}, {{1, 2}, {1, 10, 100}}, {2, 3}) ==
        std::vector<double>{1, 10, 100, 2, 20, 200});
  // Implicit output (letters used once, sorted) and an ellipsis over leading dims.
  CHECK(lowerEinsum("ij,jk", {{2, 2}, {2, 2}}, {{1, 2, 3, 4}, {5, 6, 7, 8}}, {2, 2}) ==
        std::vector<double>{19, 22, 43, 50});
  CHECK(lowerEinsum("...d,d->...", {{2, 3}, {3}}, {{1, 2, 3, 4, 5, 6}, {1, 0, -1}}, {2}) == std::vector<double>{-2, -2});

  // Against the definition: attention-shaped contractions, transposes, sums,
  // three operands, a broadcast size-1 batch dim.
  struct Case {
    std::string equation;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<int64_t> out;
  };
  std::vector<Case> cases = {
      {"bhqd,bhkd->bhqk", {{1, 2, 3, 4}, {1, 2, 5, 4}}, {1, 2, 3, 5}},
      {"bhqk,bhkd->bqhd", {{1, 2, 3, 5}, {1, 2, 5, 4}}, {1, 3, 2, 4}},
      {"ij->ji", {{2, 3}}, {3, 2}},
      {"ijk->", {{2, 3, 2}}, {}},
      {"ijk->ki", {{2, 3, 2}}, {2, 2}},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}, {2, 2}},
      {"ab,cd->", {{2, 2}, {3, 1}}, {}},
      {"bij,bjk->bik", {{1, 2, 3}, {4, 3, 2}}, {4, 2, 2}},
      {"i,i->", {{5}, {5}}, {}},
  };
  for (const Case &c : cases) {
    INFO(c.equation);
    std::vector<std::vector<double>> data;
    double v = 0.5;
    for (const auto &s : c.shapes) {
      int64_t n = 1;
      for (int64_t d : s) n *= d;
      auto &d = data.emplace_back();
      for (int64_t i = 0; i < n; ++i, v = v * 1.7 - std::floor(v * 1.7) - 0.3) d.push_back(v);
    }
    std::vector<double> lowered = lowerEinsum(c.equation, c.shapes, data, c.out);
    // The definition broadcasts no dims: "bij,bjk"'s first operand (batch 1)
    // is repeated to the batch of 4 the lowering broadcasts it to.
    std::vector<std::vector<int64_t>> shapes = c.shapes;
    if (shapes.size() == 2 && shapes[0][0] == 1 && c.equation == "bij,bjk->bik") {
      auto first = data[0];
      for (int k = 1; k < 4; ++k) data[0].insert(data[0].end(), first.begin(), first.end());
      shapes[0][0] = 4;
    }
    checkClose(lowered, einsumByDefinition(c.equation, shapes, data));
  }
}
