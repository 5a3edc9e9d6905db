//===- tests/Edge/PassTriggerTest.cpp - skipping passes with nothing to do ===//
//
// to_edge skips a pass whose trigger (Passes.def) matches no op of the
// program's target census. A trigger that misses an op its pass rewrites
// would silently leave that op in the program: every real program of the
// corpus goes through the passes one by one here, and each pass that changes
// the program must have had its trigger match the census taken before it.
//
//===----------------------------------------------------------------------===//
#include "Edge/DescribeOp.h"
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Serde/ProgramReader.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

using namespace exir;
using namespace irtest;

namespace {
constexpr ScalarType F32 = ScalarType::Float;

bool triggered(const std::string &pass, const Program &p) {
  return edge::edgePassTrigger(pass).anyIn(edge::TargetCensus(p));
}

std::vector<std::string> targetsOf(const Graph &g) {
  std::vector<std::string> out;
  for (const auto &n : g.nodes) out.push_back(edge::targetOf(n).qualifiedName());
  return out;
}
} // namespace

TEST_CASE("the target census lists each distinct target once, branches included", "[edge][census]") {
  Program p = programOf(condMethod(), Stage::Edge);
  edge::TargetCensus census(p);
  std::vector<std::string> seen;
  for (const auto &e : census.entries()) seen.push_back(e.target);
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::string>{"executorch.exir.dialects.edge.ops.aten.gt.Scalar",
                                         "executorch.exir.dialects.edge.ops.aten.relu.default",
                                         "executorch.exir.dialects.edge.ops.aten.sigmoid.default",
                                         "executorch.exir.dialects.edge.ops.aten.sum.default",
                                         "torch.ops.higher_order.cond"});
}

TEST_CASE("pass triggers: by op name in either dialect, by predicate, or always", "[edge][census]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.aten("relu.default", {pos("self", T("x"))}, "relu", F32, {2, 3});
  b.aten("t.default", {pos("self", T("relu"))}, "t", F32, {3, 2});
  b.output("t");
  Program p = programOf(b.ep);
  CHECK_FALSE(triggered("decompose-rnn", p));
  CHECK_FALSE(triggered("decompose-activations", p));
  CHECK_FALSE(triggered("functionalize", p));
  CHECK_FALSE(triggered("remove-asserts", p));
  CHECK(triggered("replace-view-ops", p)); // t -> t_copy
  CHECK(triggered("normalize-layouts", p)); // always()
  CHECK(triggered("no-such-pass", p));      // unknown names are never skipped
  // An op name matches any overload; an edge op counts too (dim-order-ops runs on edge ops).
  graphOf(p).nodes[0].target = "torch.ops.aten.silu.default";
  CHECK(triggered("decompose-activations", p));
  graphOf(p).nodes[0].target = "executorch.exir.dialects.edge.ops.aten.relu6.default";
  CHECK(triggered("decompose-activations", p));
  graphOf(p).nodes[0].target = "torch.ops.aten.relu_.default";
  CHECK(triggered("functionalize", p));
  // A name that only starts like a trigger's op does not match.
  graphOf(p).nodes[0].target = "torch.ops.aten.silu_backward.default";
  CHECK_FALSE(triggered("decompose-activations", p));
}

TEST_CASE("the built-in passes describe-op lists and the passes' triggers name the same ops", "[edge][census][describe]") {
  // Base name ("silu" of "aten::silu", "conv2d" of "aten::conv2d.padding").
  auto baseName = [](const std::string &op) {
    std::string name = op.substr(op.find("::") + 2);
    return name.substr(0, name.find('.'));
  };
  std::map<std::string, std::set<std::string>> described; // pass -> base names
  for (const edge::CppDecomposition &d : edge::cppDecompositions()) {
    INFO(d.op << " by " << d.pass);
    bool known = false;
    for (const auto &info : edge::edgePassRegistry()) known |= info.name == d.pass;
    CHECK(known);
    edge::PassTrigger trigger = edge::edgePassTrigger(d.pass);
    std::string op = d.op, ns = op.substr(0, op.find("::")), name = op.substr(op.find("::") + 2);
    size_t dot = name.find('.');
    std::string target = atenTarget(ns, name.substr(0, dot), dot == std::string::npos ? "default" : name.substr(dot + 1));
    if (trigger.kind == edge::PassTrigger::Kind::Matching) CHECK(trigger.matches(target, parseTarget(target)));
    described[d.pass].insert(baseName(d.op));
  }
  size_t atenOpPasses = 0;
  for (const auto &info : edge::edgePassRegistry()) {
    edge::PassTrigger trigger = edge::edgePassTrigger(info.name);
    if (trigger.kind != edge::PassTrigger::Kind::AtenOps) continue;
    ++atenOpPasses;
    std::istringstream names(trigger.ops);
    std::set<std::string> triggered;
    for (std::string name; names >> name;) triggered.insert(name);
    INFO(info.name);
    CHECK(described[info.name] == triggered);
  }
  CHECK(atenOpPasses >= 6);
}

TEST_CASE("to_edge runs a pass whose only op sits in a cond branch", "[edge][census][cond]") {
  Program p = atenCondProgram();
  // The false branch computes relu6, which decompose-activations turns into hardtanh.
  Graph &f = *graphOf(p).nodes.back().inputs[2].arg.graph();
  f.nodes[0].target = "torch.ops.aten.relu6.default";
  edge::EdgeOptions options;
  edge::toEdge(p, options);
  const Graph &branch = *graphOf(p).nodes.back().inputs[2].arg.graph();
  CHECK(targetsOf(branch) == std::vector<std::string>{"aten::hardtanh"});
}

namespace {
/// Runs `p` through to_edge's passes one by one; each pass that changes it
/// must have had its trigger match the census taken before it. Adds the
/// names of the passes that changed it to `changed`.
void checkTriggers(Program p, const std::string &label, std::set<std::string> &changedSomewhere) {
  static const std::vector<std::string> order = edge::toEdgePassOrder();
  for (const auto &name : order) {
    INFO(label << ": " << name);
    edge::TargetCensus census(p);
    Program before = p;
    bool changed = false;
    if (name == "check-aten-dialect") {
      bool threw = false;
      try {
        edge::checkAtenDialect(p, {});
      } catch (const Error &) {
        threw = true; // a program that needs --allow-non-core: the check had work
      }
      changed = threw || !(p == before);
      bool matched = false;
      for (const auto &e : census.entries()) matched |= edge::needsAtenDialectCheck(e.target, e.parsed);
      if (changed) CHECK(matched);
      if (changed) changedSomewhere.insert(name);
      if (threw) return;
      continue;
    }
    std::unique_ptr<Pass> pass;
    for (const auto &info : edge::edgePassRegistry())
      if (info.name == name) pass = info.create();
    REQUIRE(pass);
    pass->run(p);
    if (name == "to-edge-ops") p.stage = Stage::Edge;
    changed = !(p == before);
    if (changed) CHECK(edge::edgePassTrigger(name).anyIn(census));
    if (changed) changedSomewhere.insert(name);
  }
}

/// x -> op(x, args...) on f32[2, 3, 4, 4], an ATen program.
Program oneOp(const std::string &op, std::vector<NamedArgument> args, const std::vector<int64_t> &outSizes) {
  GraphBuilder b;
  b.input("x", F32, {2, 3, 4, 4});
  args.insert(args.begin(), pos("self", T("x")));
  b.aten(op, std::move(args), "y", F32, outSizes);
  b.output("y");
  return programOf(b.ep);
}
} // namespace

TEST_CASE("no pass changes a program without its trigger matching", "[edge][census][corpus]") {
  std::set<std::string> changedSomewhere;
  size_t programs = 0;
  for (const auto &entry : std::filesystem::directory_iterator(EXIR_SHARED_DIR "/corpus/torch-export")) {
    if (entry.path().extension() != ".pt2") continue;
    ++programs;
    checkTriggers(readProgram(entry.path().string()), entry.path().filename().string(), changedSomewhere);
  }
  REQUIRE(programs >= 10);
  // Ops the corpus lacks or the decomposition rules take first.
  const std::vector<int64_t> same = {2, 3, 4, 4};
  checkTriggers(oneOp("relu6.default", {}, same), "relu6", changedSomewhere);
  checkTriggers(oneOp("silu.default", {}, same), "silu", changedSomewhere);
  checkTriggers(oneOp("softmax.int", {pos("dim", Argument::integer(1))}, same), "softmax", changedSomewhere);
  checkTriggers(oneOp("log_softmax.int", {pos("dim", Argument::integer(1))}, same), "log_softmax", changedSomewhere);
  checkTriggers(oneOp("reshape.default", {pos("shape", Argument::ints_({6, 16}))}, {6, 16}), "reshape",
                changedSomewhere);
  checkTriggers(oneOp("contiguous.default", {}, same), "contiguous", changedSomewhere);
  checkTriggers(oneOp("relu_.default", {}, same), "relu_", changedSomewhere);
  checkTriggers(oneOp("prelu.default", {pos("weight", T("x"))}, same), "prelu", changedSomewhere);
  checkTriggers(oneOp("rand_like.default", {}, same), "rand_like", changedSomewhere); // refused: no rule
  {
    GraphBuilder b;
    b.input("x", F32, {2, 3});
    b.aten("einsum.default", {pos("equation", Argument::string("ij->ji")), pos("tensors", Argument::tensors({"x"}))}, "y",
           F32, {3, 2});
    b.output("y");
    checkTriggers(programOf(b.ep), "einsum", changedSomewhere);
  }
  // The check is only as good as its programs: each gated pass changes one of them.
  size_t gated = 0;
  for (const std::string &name : edge::toEdgePassOrder()) {
    if (name != "check-aten-dialect" && edge::edgePassTrigger(name).kind == edge::PassTrigger::Kind::Always) continue;
    INFO(name);
    CHECK(changedSomewhere.count(name));
    ++gated;
  }
  CHECK(gated >= 10); // the gated passes of Passes.def were found
}
