//===- Edge/DecomposeRnn.cpp - lstm/gru/rnn -> unrolled gate arithmetic ---===//
//
// aten::lstm.input, gru.input, rnn_tanh.input and rnn_relu.input have no
// core-ATen form and no kernel in the portable runtime; their semantics
// unroll into per-step core ops. RNN: h = act(x_t W_ih^T + b_ih + h W_hh^T + b_hh).
// LSTM (gate order i, f, g, o): gates = x_t W_ih^T + b_ih + h W_hh^T + b_hh,
// c = f*c + i*g, h = o*tanh(c). GRU (gate order r, z, n): r, z = sigmoid of the
// summed projections, n = tanh(x_t W_in^T + b_in + r * (h W_hn^T + b_hn)),
// h = (1 - z)*n + z*h, computed as n + z*(h - n). A loop over layers and time
// steps cannot be said as a rule, hence code. Bidirectional layers run a
// second cell from the last step back and concatenate its outputs after the
// forward ones. Needs static sizes; dropout between layers only in training,
// which is refused.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Support/Error.h"

namespace exir::edge {

namespace {

/// The shared emitter plus the shapes an unrolled recurrent layer needs.
struct Emitter : NodeEmitter {
  Emitter(Graph &graph, const Node &origin)
      : NodeEmitter(graph, origin, parseTarget(origin.target).name + " with dynamic sizes is not supported") {}

  std::string select(const std::string &x, int64_t dim, int64_t index) {
    auto s = sizes(x);
    s.erase(s.begin() + dim);
    return call("select", "int", {positional("self", Argument::tensor(x)), positional("dim", Argument::integer(dim)),
                                  positional("index", Argument::integer(index))},
                meta(x, s));
  }
  std::string slice(const std::string &x, int64_t dim, int64_t start, int64_t end) {
    auto s = sizes(x);
    s[size_t(dim)] = end - start;
    return call("slice", "Tensor", {positional("self", Argument::tensor(x)), positional("dim", Argument::integer(dim)),
                                    positional("start", Argument::integer(start)),
                                    positional("end", Argument::integer(end))},
                meta(x, s));
  }
  std::string transpose2d(const std::string &w) {
    auto s = sizes(w);
    return call("permute", "default", {positional("self", Argument::tensor(w)), positional("dims", Argument::ints_({1, 0}))},
                meta(w, {s[1], s[0]}));
  }
  std::string binary(const char *name, const std::string &a, const std::string &b) {
    return call(name, "Tensor", {positional("self", Argument::tensor(a)), positional("other", Argument::tensor(b))},
                meta(a, sizes(a)));
  }
  std::string unary(const char *name, const std::string &a) {
    return call(name, "default", {positional("self", Argument::tensor(a))}, meta(a, sizes(a)));
  }
  std::string linear(const std::string &x, const std::string &wT, const std::string &bias) {
    auto xs = sizes(x), ws = sizes(wT);
    if (bias.empty())
      return call("mm", "default", {positional("self", Argument::tensor(x)), positional("mat2", Argument::tensor(wT))},
                  meta(x, {xs[0], ws[1]}));
    return call("addmm", "default",
                {positional("self", Argument::tensor(bias)), positional("mat1", Argument::tensor(x)),
                 positional("mat2", Argument::tensor(wT))},
                meta(x, {xs[0], ws[1]}));
  }
  std::string cat(const std::vector<std::string> &items, int64_t dim, const std::string &result = "") {
    auto s = sizes(items.front());
    s[size_t(dim)] = 0;
    for (const auto &v : items) s[size_t(dim)] += sizes(v)[size_t(dim)];
    return call("cat", "default", {positional("tensors", Argument::tensors(items)), positional("dim", Argument::integer(dim))},
                meta(items.front(), s), result);
  }
  std::string stack(const std::vector<std::string> &items, int64_t dim, const std::string &result = "") {
    std::vector<std::string> expanded;
    for (const auto &v : items) {
      auto s = sizes(v);
      s.insert(s.begin() + dim, 1);
      expanded.push_back(call("unsqueeze", "default",
                              {positional("self", Argument::tensor(v)), positional("dim", Argument::integer(dim))},
                              meta(v, s)));
    }
    return cat(expanded, dim, result);
  }
};

/// What the recurrent ops share: the flags, the weights of each layer and
/// direction, and the time-major or batch-major input, checked once for all.
struct RnnCall {
  std::string where; // "node lstm at File ..." for errors
  int64_t layers = 0, directions = 1;
  bool hasBiases = false;
  int64_t timeDim = 0, steps = 0;
  std::vector<std::string> params;

  RnnCall(Emitter &e, const Node &node, const char *kind, size_t expectedOutputs) {
    auto flag = [&](const char *name) {
      const Argument &a = requireArg(node, name);
      return a.kind == ArgKind::Bool && a.intValue != 0;
    };
    where = whereOf(node);
    directions = flag("bidirectional") ? 2 : 1;
    layers = requireArg(node, "num_layers").intValue;
    if (flag("train") && layers > 1 && requireArg(node, "dropout").floatValue != 0)
      throw Error(std::string(kind) + " with dropout in training mode cannot be lowered; export the model in eval() mode", {},
                  where);
    hasBiases = flag("has_biases");
    params = requireArg(node, "params").names.toVector();
    if (layers < 1 || params.size() != perCell() * size_t(layers * directions) || node.outputs.size() != expectedOutputs)
      throw Error(std::string(kind) +
                      " arguments do not match num_layers/has_biases/bidirectional (projections are not supported)",
                  {}, where);
    auto inSizes = e.sizes(requireArg(node, "input").name);
    if (inSizes.size() != 3) throw Error(std::string("unbatched ") + kind + " input is not supported", {}, where);
    timeDim = flag("batch_first") ? 1 : 0;
    steps = inSizes[size_t(timeDim)];
  }
  static std::string whereOf(const Node &node) {
    std::string frame = userFrame(node);
    return "node " + node.displayName() + (frame.empty() ? "" : " at " + frame);
  }
  // Weights per layer and direction, in torch's order: layer-major, then forward, reverse.
  size_t perCell() const { return hasBiases ? 4 : 2; }
  const std::string &wih(int64_t k) const { return params[size_t(k) * perCell()]; }
  const std::string &whh(int64_t k) const { return params[size_t(k) * perCell() + 1]; }
  std::string bih(int64_t k) const { return hasBiases ? params[size_t(k) * perCell() + 2] : ""; }
  std::string bhh(int64_t k) const { return hasBiases ? params[size_t(k) * perCell() + 3] : ""; }
};

/// The loop over layers, directions and time steps. `initial` holds the
/// initial state tensors ([layers * directions, batch, hidden] each: h, and c
/// for lstm); `cell(e, rnn, k, x_t, state, W_ih^T, W_hh^T)` gives the next
/// state of cell k = layer * directions + direction, whose state[0] (h) is the
/// step's output. The reverse direction runs from the last step to the first;
/// its outputs are concatenated after the forward ones, step by step, on the
/// feature dim. Outputs: the last layer's per-step h, then each final state
/// stacked over cells.
template <typename Cell>
std::vector<Node> unroll(Graph &g, Node &node, const char *kind, const std::vector<std::string> &initial,
                         const Cell &cell) {
  Emitter e(g, node);
  RnnCall rnn(e, node, kind, 1 + initial.size());
  std::string layerInput = requireArg(node, "input").name;
  std::vector<std::vector<std::string>> finals(initial.size());
  for (int64_t l = 0; l < rnn.layers; ++l) {
    std::vector<std::vector<std::string>> byDirection;
    for (int64_t d = 0; d < rnn.directions; ++d) {
      int64_t k = l * rnn.directions + d;
      std::string wihT = e.transpose2d(rnn.wih(k)), whhT = e.transpose2d(rnn.whh(k));
      std::vector<std::string> state;
      for (const auto &s0 : initial) state.push_back(e.select(s0, 0, k));
      std::vector<std::string> outputs(size_t(rnn.steps));
      for (int64_t i = 0; i < rnn.steps; ++i) {
        int64_t t = d == 0 ? i : rnn.steps - 1 - i;
        state = cell(e, rnn, k, e.select(layerInput, rnn.timeDim, t), state, wihT, whhT);
        outputs[size_t(t)] = state[0];
      }
      for (size_t s = 0; s < state.size(); ++s) finals[s].push_back(state[s]);
      byDirection.push_back(std::move(outputs));
    }
    std::vector<std::string> outputs = byDirection[0];
    if (rnn.directions == 2)
      for (size_t t = 0; t < outputs.size(); ++t) outputs[t] = e.cat({byDirection[0][t], byDirection[1][t]}, 1);
    bool last = l + 1 == rnn.layers;
    layerInput = e.stack(outputs, rnn.timeDim, last ? node.outputs[0].name : "");
  }
  for (size_t s = 0; s < finals.size(); ++s) e.stack(finals[s], 0, node.outputs[1 + s].name);
  return e.take();
}

using State = std::vector<std::string>;

std::vector<Node> decomposeLstm(Graph &g, Node &node) {
  const auto &hx = requireArg(node, "hx").names;
  if (hx.size() != 2) throw Error("lstm takes (h0, c0) as hx", {}, RnnCall::whereOf(node));
  return unroll(g, node, "lstm", hx.toVector(),
                [](Emitter &e, const RnnCall &rnn, int64_t k, const std::string &xt, const State &state,
                   const std::string &wihT, const std::string &whhT) {
                  int64_t hidden = e.sizes(rnn.whh(k))[1];
                  const std::string &h = state[0], &c = state[1];
                  std::string gates = e.binary("add", e.linear(xt, wihT, rnn.bih(k)), e.linear(h, whhT, rnn.bhh(k)));
                  auto gate = [&](int64_t q) { return e.slice(gates, 1, q * hidden, (q + 1) * hidden); };
                  std::string i = e.unary("sigmoid", gate(0));
                  std::string f = e.unary("sigmoid", gate(1));
                  std::string gg = e.unary("tanh", gate(2));
                  std::string o = e.unary("sigmoid", gate(3));
                  std::string c2 = e.binary("add", e.binary("mul", f, c), e.binary("mul", i, gg));
                  std::string h2 = e.binary("mul", o, e.unary("tanh", c2));
                  return State{h2, c2};
                });
}

std::vector<Node> decomposeGru(Graph &g, Node &node) {
  return unroll(g, node, "gru", {requireArg(node, "hx").name},
                [](Emitter &e, const RnnCall &rnn, int64_t k, const std::string &xt, const State &state,
                   const std::string &wihT, const std::string &whhT) {
                  int64_t hidden = e.sizes(rnn.whh(k))[1];
                  const std::string &h = state[0];
                  std::string gi = e.linear(xt, wihT, rnn.bih(k)), gh = e.linear(h, whhT, rnn.bhh(k));
                  auto gate = [&](const std::string &v, int64_t q) {
                    return e.slice(v, 1, q * hidden, (q + 1) * hidden);
                  };
                  std::string r = e.unary("sigmoid", e.binary("add", gate(gi, 0), gate(gh, 0)));
                  std::string z = e.unary("sigmoid", e.binary("add", gate(gi, 1), gate(gh, 1)));
                  std::string n = e.unary("tanh", e.binary("add", gate(gi, 2), e.binary("mul", r, gate(gh, 2))));
                  return State{e.binary("add", n, e.binary("mul", z, e.binary("sub", h, n)))};
                });
}

/// rnn_tanh / rnn_relu: h = act(x_t W_ih^T + b_ih + h W_hh^T + b_hh).
std::vector<Node> decomposeElmanRnn(Graph &g, Node &node, const char *kind, const char *activation) {
  return unroll(g, node, kind, {requireArg(node, "hx").name},
                [activation](Emitter &e, const RnnCall &rnn, int64_t k, const std::string &xt, const State &state,
                             const std::string &wihT, const std::string &whhT) {
                  return State{e.unary(activation, e.binary("add", e.linear(xt, wihT, rnn.bih(k)),
                                                            e.linear(state[0], whhT, rnn.bhh(k))))};
                });
}

} // namespace

void decomposeRnn(Program &program) {
  TargetCache targets;
  for (auto &[name, method] : program.methods)
    rewriteNodes(method.program.graph, [&targets](Graph &g, Node &node) -> std::optional<std::vector<Node>> {
      const OpTarget &t = targets(node);
      if (t.dialect != TargetDialect::Aten || t.ns != "aten" || t.overload != "input") return std::nullopt;
      if (t.name == "lstm") return decomposeLstm(g, node);
      if (t.name == "gru") return decomposeGru(g, node);
      if (t.name == "rnn_tanh") return decomposeElmanRnn(g, node, "rnn_tanh", "tanh");
      if (t.name == "rnn_relu") return decomposeElmanRnn(g, node, "rnn_relu", "relu");
      return std::nullopt;
    });
}

} // namespace exir::edge
