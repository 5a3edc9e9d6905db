//===- tests/IR/GraphPrinterTest.cpp - torch-style graph printing ---------===//
//
// A tiny graph prints exactly the lines torch prints for an ExportedProgram:
// annotated placeholders and nodes, FX's "x = None" last-use notes, keyword
// arguments, stack-trace comment groups, edge and alloc spellings, the graph
// signature and range constraints; planned programs add placement notes.
//
//===----------------------------------------------------------------------===//
#include "IR/GraphPrinter.h"
#include "GraphBuilder.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace exir;
using namespace irtest;

namespace {

std::string printed(const ExportedProgram &ep, PrintOptions opts = {}) {
  std::ostringstream os;
  printExportedProgram(os, ep, opts);
  return os.str();
}

/// The lines of `text` between the `def forward` line and the `return` line, inclusive.
std::vector<std::string> bodyLines(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("def forward") != std::string::npos) inside = true;
    if (inside) lines.push_back(line);
    if (inside && line.find("return (") != std::string::npos) break;
  }
  return lines;
}

const std::string kTraceA = "  File \"/home/u/model.py\", line 12, in forward\n    y = x + y\n";
const std::string kTraceB = "  File \"/home/u/model.py\", line 13, in forward\n    return y * y\n";

} // namespace

TEST_CASE("printer: nodes, annotations and last-use notes", "[printer]") {
  GraphBuilder b;
  b.input("x", ScalarType::Float, {2, 2}).input("y", ScalarType::Float, {2, 2});
  b.aten("add.Tensor", {pos("self", T("x")), pos("other", T("y")), kw("alpha", Argument::integer(2))}, "add",
         ScalarType::Float, {2, 2});
  b.aten("mul.Tensor", {pos("self", T("add")), pos("other", T("y"))}, "mul", ScalarType::Float, {2, 2});
  b.aten("view.default", {pos("self", T("mul")), pos("size", Argument::ints_({4}))}, "view", ScalarType::Float, {4});
  b.output("view");
  std::string text = printed(b.ep);
  std::vector<std::string> expected = {
      "        def forward(self, x: \"f32[2, 2]\", y: \"f32[2, 2]\"):",
      "            # No stacktrace found for following nodes",
      "            add: \"f32[2, 2]\" = torch.ops.aten.add.Tensor(x, y, alpha = 2);  x = None",
      "            mul: \"f32[2, 2]\" = torch.ops.aten.mul.Tensor(add, y);  add = y = None",
      "            view: \"f32[4]\" = torch.ops.aten.view.default(mul, [4]);  mul = None",
      "            return (view,)",
  };
  CHECK(bodyLines(text) == expected);
  CHECK_THAT(text, Catch::StartsWith("ExportedProgram:\n    class GraphModule(torch.nn.Module):\n"));
  CHECK_THAT(text, Catch::Contains(
                       "Graph signature: ExportGraphSignature(input_specs=[InputSpec(kind=<InputKind.USER_INPUT: 1>, "
                       "arg=TensorArgument(name='x'), target=None, persistent=None), InputSpec(kind=<InputKind."
                       "USER_INPUT: 1>, arg=TensorArgument(name='y'), target=None, persistent=None)], output_specs=["
                       "OutputSpec(kind=<OutputKind.USER_OUTPUT: 1>, arg=TensorArgument(name='view'), target=None)])\n"));
  CHECK_THAT(text, Catch::EndsWith("Range constraints: {}\n"));
}

TEST_CASE("printer: stack-trace comments group consecutive nodes", "[printer]") {
  GraphBuilder b;
  b.input("x", ScalarType::Float, {3});
  b.aten("relu.default", {pos("self", T("x"))}, "relu", ScalarType::Float, {3}).metadata.set("stack_trace", kTraceA);
  b.aten("neg.default", {pos("self", T("relu"))}, "neg", ScalarType::Float, {3}).metadata.set("stack_trace", kTraceA);
  b.aten("mul.Tensor", {pos("self", T("neg")), pos("other", T("neg"))}, "mul", ScalarType::Float, {3})
      .metadata.set("stack_trace", kTraceB);
  b.aten("abs.default", {pos("self", T("mul"))}, "abs", ScalarType::Float, {3});
  b.output("abs");
  std::vector<std::string> expected = {
      "        def forward(self, x: \"f32[3]\"):",
      "             # File: /home/u/model.py:12 in forward, code: y = x + y",
      "            relu: \"f32[3]\" = torch.ops.aten.relu.default(x);  x = None",
      "            neg: \"f32[3]\" = torch.ops.aten.neg.default(relu);  relu = None",
      "",
      "             # File: /home/u/model.py:13 in forward, code: return y * y",
      "            mul: \"f32[3]\" = torch.ops.aten.mul.Tensor(neg, neg);  neg = None",
      "",
      "            # No stacktrace found for following nodes",
      "            abs: \"f32[3]\" = torch.ops.aten.abs.default(mul);  mul = None",
      "            return (abs,)",
  };
  CHECK(bodyLines(printed(b.ep)) == expected);
  // Without stack traces there are no comment lines at all.
  PrintOptions quiet;
  quiet.stackTraces = false;
  std::vector<std::string> lines = bodyLines(printed(b.ep, quiet));
  REQUIRE(lines.size() == 6);
  CHECK(lines[1] == "            relu: \"f32[3]\" = torch.ops.aten.relu.default(x);  x = None");
}

TEST_CASE("printer: trace frames inside torch are skipped", "[printer]") {
  GraphBuilder b;
  b.input("x", ScalarType::Float, {3});
  std::string trace = kTraceA + "  File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 1, in "
                                "_call_impl\n    return f(x)\n";
  b.aten("relu.default", {pos("self", T("x"))}, "relu", ScalarType::Float, {3}).metadata.set("stack_trace", trace);
  b.output("relu");
  CHECK_THAT(printed(b.ep), Catch::Contains("             # File: /home/u/model.py:12 in forward, code: y = x + y\n"));
}

TEST_CASE("printer: edge targets, alloc spelling and placement notes", "[printer]") {
  GraphBuilder b;
  b.input("x", ScalarType::Float, {2, 2});
  Node &alloc = b.call(kAllocTarget, {pos("alloc_arg", Argument::string("(2, 2);7"))}, "alloc", ScalarType::Float,
                       {2, 2});
  (void)alloc;
  b.call("torch.ops.aten.relu.out", {pos("self", T("x")), kw("out", T("alloc"))}, "relu", ScalarType::Float, {2, 2});
  b.edge("neg.default", {pos("self", T("relu"))}, "aten_neg_default", ScalarType::Float, {2, 2});
  b.output("aten_neg_default");

  Program p = programOf(b.ep, Stage::Planned);
  MemoryPlan plan;
  plan.algorithm = "greedy";
  plan.bufferSizes = {0, 48};
  plan.lowerBounds = {0, 32};
  plan.allocations.set("x", Allocation{1, 32});
  plan.allocations.set("alloc", Allocation{1, 0});
  plan.allocations.set("relu", Allocation{1, 0});
  p.methods.find("forward")->plan = plan;
  std::ostringstream os;
  printProgram(os, p);
  std::string text = os.str();
  CHECK_THAT(text, Catch::StartsWith("Program (stage: planned, methods: 1)\n\nMethod forward:\n"));
  CHECK_THAT(text, Catch::Contains("def forward(self, x: \"f32[2, 2]\" /* mem=1+32 */):\n"));
  CHECK_THAT(text, Catch::Contains("            alloc: \"f32[2, 2]\" = executorch_exir_memory_alloc(((2, 2), "
                                   "torch.float32))  # alloc@mem=1+0\n"));
  CHECK_THAT(text, Catch::Contains("            relu: \"f32[2, 2]\" = torch.ops.aten.relu.out(x, out = alloc);  x = "
                                   "alloc = None  # relu@mem=1+0\n"));
  CHECK_THAT(text, Catch::Contains("            aten_neg_default: \"f32[2, 2]\" = "
                                   "executorch_exir_dialects_edge__ops_aten_neg_default(relu);  relu = None\n"));
  CHECK_THAT(text, Catch::Contains("Memory plan: algorithm=greedy alignment=16 arena1=48 (lower bound 32)\n"));
}

TEST_CASE("printer: literals, symbolic sizes, constants and range constraints", "[printer]") {
  GraphBuilder b;
  b.param("p_w", "w", ScalarType::Float, {3});
  b.input("x", ScalarType::Long, {3});
  b.ep.graph.tensorValues.find("x")->sizes[0] = SymInt::symbol("Symbol('s0', integer=True, positive=True)");
  b.aten("clamp.default", {pos("self", T("x")), pos("min", Argument::real(0.5)), pos("max", Argument::none())},
         "clamp", ScalarType::Long, {3});
  b.aten("_to_copy.default",
         {pos("self", T("clamp")), kw("dtype", Argument::scalarType(ScalarType::Float)),
          kw("non_blocking", Argument::boolean(false))},
         "to", ScalarType::Float, {3});
  b.aten("mul.Tensor", {pos("self", T("to")), pos("other", T("p_w"))}, "mul", ScalarType::Float, {3});
  b.output("mul");
  b.ep.rangeConstraints.set("s0", RangeConstraint{2, std::nullopt});
  std::string text = printed(b.ep);
  CHECK_THAT(text, Catch::Contains("def forward(self, p_w: \"f32[3]\", x: \"i64[s0]\"):\n"));
  CHECK_THAT(text, Catch::Contains("clamp: \"i64[3]\" = torch.ops.aten.clamp.default(x, 0.5, None);  x = None\n"));
  CHECK_THAT(text, Catch::Contains("to: \"f32[3]\" = torch.ops.aten._to_copy.default(clamp, dtype = torch.float32, "
                                   "non_blocking = False);  clamp = None\n"));
  CHECK_THAT(text, Catch::Contains("InputSpec(kind=<InputKind.PARAMETER: 2>, arg=TensorArgument(name='p_w'), "
                                   "target='w', persistent=None)"));
  CHECK_THAT(text, Catch::EndsWith("Range constraints: {s0: VR[2, int_oo]}\n"));

  Program p = programOf(b.ep);
  ConstantTensor c;
  c.sizes = {3};
  c.data.file = "weights.bin";
  c.data.offset = 64;
  c.data.length = 12;
  p.constants.set("w", c);
  std::ostringstream os;
  printProgram(os, p);
  CHECK_THAT(os.str(), Catch::EndsWith("\nConstants:\n  w: f32[3] 12 bytes @ weights.bin+64\n"));
}

TEST_CASE("printer: sympy sizes as torch shows them, cond branches as nested classes", "[printer][cond]") {
  ExportedProgram ep = condMethod();
  const std::string s0 = "Symbol('s0', integer=True, positive=True)";
  ep.graph.tensorValues.find("x")->sizes[0] = SymInt::symbol("Mul(Integer(4), " + s0 + ")");
  ep.graph.tensorValues.find("getitem")->sizes[0] =
      SymInt::symbol("Add(Integer(1), FloorDiv(" + s0 + ", Integer(2)))");
  PrintOptions opts;
  opts.stackTraces = false;
  std::string text = printed(ep, opts);
  CHECK_THAT(text, Catch::Contains("def forward(self, x: \"f32[4*s0, 4]\"):\n"));
  CHECK_THAT(text, Catch::Contains("getitem: \"f32[(s0//2) + 1, 4]\" = torch.ops.higher_order.cond(gt, "
                                   "true_graph_0, false_graph_0, [x]);  gt = x = None\n"));
  CHECK_THAT(text, Catch::Contains("            return (getitem,)\n\n"
                                   "        class true_graph_0(torch.nn.Module):\n"
                                   "            def forward(self, x: \"f32[2, 4]\"):\n"
                                   "                relu: \"f32[2, 4]\" = "
                                   "executorch_exir_dialects_edge__ops_aten_relu_default(x);  x = None\n"
                                   "                return (relu,)\n\n"
                                   "        class false_graph_0(torch.nn.Module):\n"));
}

TEST_CASE("dot: labels break lines, delegate calls name their lowered module", "[printer][dot]") {
  GraphBuilder b;
  b.input("x", ScalarType::Float, {2});
  Node &call = b.call(kDelegateTarget, {pos("", Argument::string("lowered_module_0")), pos("", T("x"))}, "y",
                      ScalarType::Float, {2});
  call.name = "executorch_call_delegate";
  b.output("y");
  Program p = programOf(b.ep, Stage::Delegated);
  Delegate d;
  d.backendId = "BackendWithCompilerDemo";
  p.delegates.set("lowered_module_0", d);
  std::ostringstream os;
  printDot(os, p);
  std::string dot = os.str();
  // One DOT escape per line break: Graphviz shows "x" and "f32[2]" on two lines.
  CHECK_THAT(dot, Catch::Contains("label=\"x\\nf32[2]\""));
  CHECK(dot.find("\\\\n") == std::string::npos);
  CHECK_THAT(dot, Catch::Contains("\\nlowered_module_0 (BackendWithCompilerDemo)\\nf32[2]\""));
}

TEST_CASE("printer: constant methods with their values", "[printer]") {
  GraphBuilder b;
  b.input("x", ScalarType::Float, {2});
  b.output("x");
  Program p = programOf(b.ep, Stage::Edge);
  ConstantValue n, f, t, s;
  n.kind = ConstantValue::Kind::Int;
  n.intValue = 128;
  f.kind = ConstantValue::Kind::Float;
  f.floatValue = 0.5;
  t.kind = ConstantValue::Kind::Bool;
  t.intValue = 1;
  s.kind = ConstantValue::Kind::String;
  s.stringValue = "hi";
  p.constantMethods.set("get_max_seq_len", {n});
  p.constantMethods.set("meta", {f, t, s});
  std::ostringstream os;
  printProgram(os, p);
  CHECK_THAT(os.str(), Catch::Contains("\nConstant methods:\n  get_max_seq_len() -> (128,)\n  meta() -> (0.5, True, 'hi')\n"));
}
