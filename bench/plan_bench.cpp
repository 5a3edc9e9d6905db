//===- bench/plan_bench.cpp - Memory placement benchmark ------------------===//
//
// Generates synthetic programs shaped like the graphs exir-plan sees, turns
// them into placement items the way the planner computes lifetimes
// (pte-format.md §5.3: placeholders first and live from node 0, one
// memory.alloc node before each out-variant op, a view shares its base's
// storage, graph outputs live to the output node, mutable buffers to the
// end), runs every algorithm, verifies each placement, and prints per case
// and algorithm: total bytes, lower bound, ratio and time.
//
//   exir-plan-bench [--case NAME] [--algorithm NAME] [--svg DIR]
//
// Cases: mlp (chain), resnet (skip connections), unet (long-lived skips),
// convnet (MobileNet-like inverted residuals),
// llama (32 decoder layers, KV caches as mutable buffers), random (a random
// DAG of 100k items).
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanRender.h"
#include "Plan/PlanVerifier.h"
#include "Plan/Placement.h"
#include "Support/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace exir::plan;

namespace {

/// A tiny dataflow graph: each value is a placeholder, an op result (one
/// alloc node + one op node), or a view of another value (one view node).
class Program {
public:
  uint32_t input(const std::string &name, uint64_t bytes) {
    return add({name, bytes, Kind::Input, {}, -1});
  }
  uint32_t mutableBuffer(const std::string &name, uint64_t bytes) {
    return add({name, bytes, Kind::Buffer, {}, -1});
  }
  uint32_t op(const std::string &name, uint64_t bytes, std::vector<uint32_t> inputs) {
    return add({name, bytes, Kind::Op, std::move(inputs), -1});
  }
  /// A view (reshape, transpose, ...): no new storage.
  uint32_t view(const std::string &name, uint32_t base) {
    return add({name, values_[base].bytes, Kind::View, {base}, int32_t(base)});
  }
  /// An op that writes into existing storage (e.g. a KV cache update): only
  /// a use of its inputs, no new value.
  void inplace(std::vector<uint32_t> inputs) {
    add({"", 0, Kind::InPlace, std::move(inputs), -1});
  }
  void output(uint32_t value) { outputs_.push_back(value); }

  /// Node numbering and lifetimes as upstream's update_all_tensors_lifetime.
  std::vector<PlanItem> items() const {
    std::vector<uint32_t> node(values_.size()), lastUse(values_.size(), 0);
    uint32_t next = 0;
    for (size_t v = 0; v < values_.size(); ++v)
      if (values_[v].kind == Kind::Input || values_[v].kind == Kind::Buffer)
        node[v] = next++;
    for (size_t v = 0; v < values_.size(); ++v) {
      const Value &value = values_[v];
      if (value.kind == Kind::Input || value.kind == Kind::Buffer)
        continue;
      if (value.kind == Kind::Op)
        next++; // the memory.alloc node
      node[v] = next++;
      for (uint32_t in : value.inputs)
        lastUse[in] = std::max(lastUse[in], node[v]);
    }
    uint32_t outputNode = next++;
    for (uint32_t v : outputs_)
      lastUse[v] = outputNode;
    std::vector<PlanItem> items;
    std::vector<int32_t> groupOf(values_.size(), -1);
    std::vector<size_t> itemOf(values_.size(), 0);
    for (size_t v = 0; v < values_.size(); ++v) {
      const Value &value = values_[v];
      if (value.kind == Kind::InPlace)
        continue;
      PlanItem item;
      item.name = value.name;
      item.size = value.bytes;
      bool placeholder = value.kind == Kind::Input || value.kind == Kind::Buffer;
      item.start = placeholder ? 0 : node[v] - (value.kind == Kind::Op ? 1 : 0);
      item.end = std::max(item.start, lastUse[v]);
      if (value.kind == Kind::Buffer)
        item.end = outputNode;
      if (value.viewOf >= 0) {
        int32_t root = groupOf[value.viewOf] >= 0 ? groupOf[value.viewOf] : value.viewOf;
        groupOf[v] = root;
        item.shareGroup = root;
        items[itemOf[root]].shareGroup = root; // the base joins the group too
      }
      itemOf[v] = items.size();
      items.push_back(item);
    }
    return items;
  }

private:
  enum class Kind { Input, Buffer, Op, View, InPlace };
  struct Value {
    std::string name;
    uint64_t bytes;
    Kind kind;
    std::vector<uint32_t> inputs;
    int32_t viewOf;
  };
  uint32_t add(Value value) {
    values_.push_back(std::move(value));
    return uint32_t(values_.size() - 1);
  }
  std::vector<Value> values_;
  std::vector<uint32_t> outputs_;
};

std::string id(const std::string &prefix, int i) { return prefix + std::to_string(i); }

/// An MLP: a chain of linear + relu layers of varying widths.
std::vector<PlanItem> mlp() {
  Program p;
  const uint64_t batch = 64, f32 = 4;
  const uint64_t widths[] = {4096, 1024, 4096, 2048, 512, 3072, 1024, 8192, 256, 1024, 2048, 10};
  uint32_t x = p.input("x", batch * 784 * f32);
  for (int i = 0; i < 12; ++i) {
    uint32_t h = p.op(id("linear", i), batch * widths[i] * f32, {x});
    x = i == 11 ? h : p.op(id("relu", i), batch * widths[i] * f32, {h});
  }
  p.output(p.op("softmax", batch * 10 * f32, {x}));
  return p.items();
}

/// A ResNet-50-like network of basic blocks: the block input stays live
/// across the block for the residual add.
std::vector<PlanItem> resnet() {
  Program p;
  const uint64_t f32 = 4;
  uint64_t hw = 112, channels = 64;
  uint32_t x = p.input("image", 3 * 224 * 224 * f32);
  x = p.op("stem_conv", channels * hw * hw * f32, {x});
  x = p.op("stem_relu", channels * hw * hw * f32, {x});
  hw = 56;
  x = p.op("stem_pool", channels * hw * hw * f32, {x});
  int block = 0;
  for (int stage = 0; stage < 4; ++stage) {
    int blocks[] = {3, 4, 6, 3};
    for (int b = 0; b < blocks[stage]; ++b, ++block) {
      bool down = stage > 0 && b == 0;
      uint64_t outHw = down ? hw / 2 : hw, outC = 64 << stage;
      uint64_t bytes = outC * outHw * outHw * f32;
      std::string n = "b" + std::to_string(block) + "_";
      uint32_t skip = x;
      if (down)
        skip = p.op(n + "down_conv", bytes, {x});
      uint32_t h = p.op(n + "conv1", bytes, {x});
      h = p.op(n + "bn1", bytes, {h});
      h = p.op(n + "relu1", bytes, {h});
      h = p.op(n + "conv2", bytes, {h});
      h = p.op(n + "bn2", bytes, {h});
      h = p.op(n + "add", bytes, {h, skip});
      x = p.op(n + "relu2", bytes, {h});
      hw = outHw;
      channels = outC;
    }
  }
  x = p.op("avgpool", channels * f32, {x});
  uint32_t flat = p.view("flatten", x);
  p.output(p.op("fc", 1000 * f32, {flat}));
  return p.items();
}

/// A U-Net: encoder outputs stay live until the decoder concatenates them.
std::vector<PlanItem> unet() {
  Program p;
  const uint64_t f32 = 4;
  const int levels = 5;
  uint64_t hw = 256, c = 32;
  uint32_t x = p.input("image", 3 * hw * hw * f32);
  std::vector<uint32_t> skips;
  for (int l = 0; l < levels; ++l) {
    uint64_t bytes = c * hw * hw * f32;
    std::string n = "enc" + std::to_string(l) + "_";
    x = p.op(n + "conv1", bytes, {x});
    x = p.op(n + "relu1", bytes, {x});
    x = p.op(n + "conv2", bytes, {x});
    x = p.op(n + "relu2", bytes, {x});
    skips.push_back(x);
    hw /= 2;
    x = p.op(n + "pool", c * hw * hw * f32, {x});
    c *= 2;
  }
  x = p.op("mid_conv1", c * hw * hw * f32, {x});
  x = p.op("mid_relu", c * hw * hw * f32, {x});
  for (int l = levels - 1; l >= 0; --l) {
    hw *= 2;
    c /= 2;
    uint64_t bytes = c * hw * hw * f32;
    std::string n = "dec" + std::to_string(l) + "_";
    x = p.op(n + "upconv", bytes, {x});
    x = p.op(n + "cat", 2 * bytes, {x, skips[l]});
    x = p.op(n + "conv1", bytes, {x});
    x = p.op(n + "relu1", bytes, {x});
    x = p.op(n + "conv2", bytes, {x});
    x = p.op(n + "relu2", bytes, {x});
  }
  p.output(p.op("head", 2 * hw * hw * f32, {x}));
  return p.items();
}

/// A MobileNet-v2-like convnet of 800 inverted-residual blocks: each block's
/// input stays live for the residual add while a chain of 6x wider
/// activations runs beside it, and the next block's input is born before the
/// add's inputs die. Size order and program order both stack two residuals
/// and then lack room for two wide activations beside them (1.08x the bound).
std::vector<PlanItem> convnet() {
  Program p;
  const uint64_t f32 = 4, hw = 16 * 16, channels = 16, wide = 6 * channels;
  uint32_t x = p.input("image", 3 * hw * f32);
  x = p.op("stem", channels * hw * f32, {x});
  for (int b = 0; b < 800; ++b) {
    std::string n = "b" + std::to_string(b) + "_";
    uint32_t h = p.op(n + "expand", wide * hw * f32, {x});
    h = p.op(n + "relu1", wide * hw * f32, {h});
    h = p.op(n + "dw", wide * hw * f32, {h});
    h = p.op(n + "relu2", wide * hw * f32, {h});
    h = p.op(n + "project", channels * hw * f32, {h});
    x = p.op(n + "add", channels * hw * f32, {h, x});
  }
  x = p.op("pool", channels * f32, {x});
  p.output(p.op("fc", 1000 * f32, {x}));
  return p.items();
}

/// A Llama-like decoder (prefill of 128 tokens, 32 layers, grouped-query
/// attention) with per-layer K and V caches as mutable buffers.
std::vector<PlanItem> llama() {
  Program p;
  const uint64_t seq = 128, dim = 4096, heads = 32, kvHeads = 8, headDim = 128, ffn = 11008,
                 ctx = 1024, vocab = 32000, f32 = 4, f16 = 2;
  std::vector<uint32_t> kCache, vCache;
  for (int l = 0; l < 32; ++l) {
    kCache.push_back(p.mutableBuffer(id("k_cache", l), ctx * kvHeads * headDim * f16));
    vCache.push_back(p.mutableBuffer(id("v_cache", l), ctx * kvHeads * headDim * f16));
  }
  uint32_t tokens = p.input("tokens", seq * 8);
  uint32_t positions = p.input("input_pos", seq * 8);
  uint32_t h = p.op("embedding", seq * dim * f32, {tokens});
  uint32_t ropeCos = p.op("rope_cos", seq * headDim * f32, {positions});
  uint32_t ropeSin = p.op("rope_sin", seq * headDim * f32, {positions});
  for (int l = 0; l < 32; ++l) {
    std::string n = "l" + std::to_string(l) + "_";
    uint32_t norm = p.op(n + "attn_norm", seq * dim * f32, {h});
    uint32_t q = p.op(n + "wq", seq * dim * f32, {norm});
    uint32_t k = p.op(n + "wk", seq * kvHeads * headDim * f32, {norm});
    uint32_t v = p.op(n + "wv", seq * kvHeads * headDim * f32, {norm});
    uint32_t qh = p.view(n + "q_heads", q);
    uint32_t kh = p.view(n + "k_heads", k);
    uint32_t vh = p.view(n + "v_heads", v);
    uint32_t qr = p.op(n + "q_rope", seq * dim * f32, {qh, ropeCos, ropeSin});
    uint32_t kr = p.op(n + "k_rope", seq * kvHeads * headDim * f32, {kh, ropeCos, ropeSin});
    uint32_t k16 = p.op(n + "k_to_f16", seq * kvHeads * headDim * f16, {kr});
    uint32_t v16 = p.op(n + "v_to_f16", seq * kvHeads * headDim * f16, {vh});
    p.inplace({kCache[l], k16, positions});
    p.inplace({vCache[l], v16, positions});
    uint32_t kAll = p.op(n + "k_repeat", ctx * heads * headDim * f16, {kCache[l]});
    uint32_t vAll = p.op(n + "v_repeat", ctx * heads * headDim * f16, {vCache[l]});
    uint32_t scores = p.op(n + "scores", heads * seq * ctx * f32, {qr, kAll});
    uint32_t masked = p.op(n + "mask", heads * seq * ctx * f32, {scores, positions});
    uint32_t probs = p.op(n + "softmax", heads * seq * ctx * f32, {masked});
    uint32_t attn = p.op(n + "attn", seq * dim * f32, {probs, vAll});
    uint32_t merged = p.view(n + "attn_merge", attn);
    uint32_t o = p.op(n + "wo", seq * dim * f32, {merged});
    h = p.op(n + "attn_residual", seq * dim * f32, {h, o});
    uint32_t norm2 = p.op(n + "ffn_norm", seq * dim * f32, {h});
    uint32_t gate = p.op(n + "w1", seq * ffn * f32, {norm2});
    uint32_t up = p.op(n + "w3", seq * ffn * f32, {norm2});
    uint32_t act = p.op(n + "silu", seq * ffn * f32, {gate});
    uint32_t prod = p.op(n + "mul", seq * ffn * f32, {act, up});
    uint32_t down = p.op(n + "w2", seq * dim * f32, {prod});
    h = p.op(n + "ffn_residual", seq * dim * f32, {h, down});
  }
  uint32_t norm = p.op("final_norm", seq * dim * f32, {h});
  uint32_t last = p.op("last_token", dim * f32, {norm});
  p.output(p.op("logits", vocab * f32, {last}));
  return p.items();
}

/// A random DAG of 100k values: each op reads 1-3 values, mostly recent
/// ones (a window skewed towards the last few), sometimes one far back;
/// sizes log-uniform from 64 B to 1 MiB.
std::vector<PlanItem> randomDag() {
  Program p;
  uint64_t state = 12345;
  auto next = [&]() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  auto unit = [&]() { return double(next() >> 11) / double(uint64_t(1) << 53); };
  auto size = [&]() {
    double log2 = 6 + unit() * 14; // 2^6 .. 2^20 bytes
    return (uint64_t(std::pow(2.0, log2)) + 3) / 4 * 4;
  };
  const uint32_t count = 100000, inputs = 16;
  for (uint32_t i = 0; i < inputs; ++i)
    p.input(id("in", int(i)), size());
  for (uint32_t i = inputs; i < count; ++i) {
    std::vector<uint32_t> args;
    size_t arity = 1 + next() % 3;
    for (size_t a = 0; a < arity; ++a) {
      uint32_t back;
      if (next() % 1000 == 0)
        back = uint32_t(next() % i);                                      // a long skip
      else
        back = std::min<uint32_t>(i - 1, uint32_t(64 * std::pow(unit(), 3))); // mostly recent
      args.push_back(i - 1 - back);
    }
    p.op(id("v", int(i)), size(), std::move(args));
  }
  for (uint32_t i = count - 4; i < count; ++i)
    p.output(i);
  return p.items();
}

struct Case {
  std::string name;
  std::function<std::vector<PlanItem>()> make;
};

} // namespace

int main(int argc, char **argv) {
  std::string onlyCase, onlyAlgorithm, svgDir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--case" || arg == "--algorithm" || arg == "--svg") && i + 1 < argc) {
      (arg == "--case" ? onlyCase : arg == "--algorithm" ? onlyAlgorithm : svgDir) = argv[++i];
    } else {
      std::fprintf(stderr, "usage: exir-plan-bench [--case NAME] [--algorithm NAME] [--svg DIR]\n");
      return 2;
    }
  }
  std::vector<Case> cases = {{"mlp", mlp},     {"resnet", resnet},      {"unet", unet},
                             {"convnet", convnet}, {"llama", llama}, {"random", randomDag}};
  std::printf("%-8s %7s %-15s %14s %14s %7s %9s %9s\n", "case", "items", "algorithm",
              "total bytes", "lower bound", "ratio", "wall ms", "cpu ms");
  int failures = 0;
  for (const Case &c : cases) {
    if (!onlyCase.empty() && c.name != onlyCase)
      continue;
    std::vector<PlanItem> items = c.make();
    std::vector<uint64_t> bounds = lowerBounds(items);
    uint64_t bound = 0;
    for (uint64_t b : bounds)
      bound += b;
    uint64_t greedyTotal = 0;
    for (const std::string &algorithm : algorithmNames()) {
      if (!onlyAlgorithm.empty() && algorithm != onlyAlgorithm)
        continue;
      auto begin = std::chrono::steady_clock::now();
      std::clock_t cpuBegin = std::clock();
      Placement placement = planMemory(items, algorithm);
      double cpuMs = 1000.0 * double(std::clock() - cpuBegin) / CLOCKS_PER_SEC;
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                            begin)
                      .count();
      std::string note;
      try {
        verifyPlacement(items, placement);
      } catch (const exir::Error &error) {
        note = "  INVALID: " + error.message();
        ++failures;
      }
      uint64_t total = totalBytes(placement);
      if (algorithm == "greedy")
        greedyTotal = total;
      if (algorithm == "best") {
        note += "  (" + placement.algorithm + ")";
        if (greedyTotal != 0 && total > greedyTotal) {
          note += "  WORSE THAN GREEDY";
          ++failures;
        }
      }
      std::printf("%-8s %7zu %-15s %14llu %14llu %7.4f %9.1f %9.1f%s\n", c.name.c_str(),
                  items.size(), algorithm.c_str(), (unsigned long long)total,
                  (unsigned long long)bound, bound ? double(total) / double(bound) : 1.0, ms, cpuMs,
                  note.c_str());
      if (!svgDir.empty() && algorithm == "best" && items.size() <= 5000) {
        std::ofstream(svgDir + "/" + c.name + ".svg")
            << renderSvg(items, placement, c.name + " (" + placement.algorithm + ")");
        std::ofstream(svgDir + "/" + c.name + ".trace.json") << renderChromeTrace(items, placement);
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
