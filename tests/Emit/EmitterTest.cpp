//===- tests/Emit/EmitterTest.cpp - planned program -> pte::Program -------===//
//
// The emitter on small programs planned by the real passes: the order of the
// values (placeholders, allocs, literal arguments, return slot), KernelCall
// argument lists (every schema argument, defaults included, plus the return
// slot), boxed IntLists, None in Tensor and Tensor? positions, multi-output
// return lists, operator dedup, method order, the program-wide constant list
// deduplicated by bytes (tied weights, views into one storage), external
// constants for a .ptd, and compact pytree specs (pte-format.md §3.8).
//
//===----------------------------------------------------------------------===//
#include "Emit/Emitter.h"
#include "Plan/PlanPasses.h"
#include "Support/Error.h"
#include "../IR/GraphBuilder.h"
#include "Pte/PteTestUtil.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace irtest;
using exir::pte::test::valueAs;

namespace {

constexpr ScalarType F32 = ScalarType::Float;

/// Runs the plan passes (greedy placement) on an edge program, in upstream's
/// order: view_copy -> memory.view first, then out variants.
Program planned(Program p) {
  plan::viewsToAliases(p);
  plan::toOutVariant(p);
  plan::PlanningOptions options;
  options.algorithm = "greedy";
  plan::planProgram(p, options);
  return p;
}

/// forward(x, y) = x + y on 2x2 floats.
ExportedProgram addMethod() {
  GraphBuilder b;
  b.input("x", F32, {2, 2}).input("y", F32, {2, 2});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("y"))}, "aten_add_tensor", F32, {2, 2});
  b.output("aten_add_tensor");
  return b.ep;
}

const pte::KernelCall &kernelCall(const pte::ExecutionPlan &plan, size_t i) {
  REQUIRE(plan.chains.size() == 1);
  REQUIRE(i < plan.chains[0].instructions.size());
  const auto *call = std::get_if<pte::KernelCall>(&plan.chains[0].instructions[i]);
  REQUIRE(call);
  return *call;
}

/// A constant whose bytes are held inline.
ConstantTensor inlineConstant(std::vector<int64_t> sizes, std::string bytes) {
  ConstantTensor c;
  c.sizes = std::move(sizes);
  c.strides.assign(c.sizes.size(), 1);
  for (size_t d = c.sizes.size(); d-- > 1;) c.strides[d - 1] = c.strides[d] * c.sizes[d];
  c.data.length = bytes.size();
  c.data.inlineBytes = std::move(bytes);
  return c;
}

} // namespace

TEST_CASE("emitter: value order and KernelCall layout of x + y", "[emit]") {
  Program p = planned(programOf(addMethod(), Stage::Edge));
  const MemoryPlan &mp = *p.methods.find("forward")->plan;
  pte::Program out = emit::emitProgram(p);

  REQUIRE(out.executionPlan.size() == 1);
  const pte::ExecutionPlan &plan = out.executionPlan[0];
  CHECK(plan.name == "forward");
  // x, y, alloc, then add.out's literal alpha.
  REQUIRE(plan.values.size() == 4);
  const auto &x = valueAs<pte::Tensor>(plan, 0);
  CHECK(x.scalarType == ScalarType::Float);
  CHECK(x.sizes == std::vector<int32_t>{2, 2});
  CHECK(x.dimOrder == std::vector<uint8_t>{0, 1});
  CHECK(x.dataBufferIdx == 0);
  CHECK(x.shapeDynamism == pte::TensorShapeDynamism::Static);
  REQUIRE(x.allocationInfo);
  CHECK(x.allocationInfo->memoryId == 1);
  CHECK(x.allocationInfo->offset() == mp.allocations.find("x")->offset);
  const auto &alloc = valueAs<pte::Tensor>(plan, 2);
  REQUIRE(alloc.allocationInfo);
  CHECK(alloc.allocationInfo->offset() == mp.allocations.find("alloc")->offset);
  CHECK(valueAs<pte::Int>(plan, 3).intVal == 1); // alpha, from the schema default

  REQUIRE(plan.operators.size() == 1);
  CHECK(plan.operators[0].name == "aten::add");
  CHECK(plan.operators[0].overload == "out");
  const pte::KernelCall &call = kernelCall(plan, 0);
  CHECK(call.opIndex == 0);
  // add.out(self, other, *, alpha, out) + return slot = out.
  CHECK(call.args == std::vector<int32_t>{0, 1, 3, 2, 2});
  CHECK(plan.inputs == std::vector<int32_t>{0, 1});
  CHECK(plan.outputs == std::vector<int32_t>{2});
  CHECK(plan.nonConstBufferSizes == std::vector<int64_t>{0, 48});
  REQUIRE(plan.containerMetaType);
  CHECK(plan.containerMetaType->encodedInpStr == "T2#2#0(T2#1#1($,$),D0())");
  CHECK(plan.containerMetaType->encodedOutStr == "$");
  // Only the reserved placeholder in the constant list.
  REQUIRE(out.constants.size() == 1);
  CHECK(out.constants[0].empty());
}

TEST_CASE("emitter: int[] arguments are boxed IntLists", "[emit]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.edge("permute_copy.default", {pos("self", T("x")), pos("dims", Argument::ints_({1, 0}))}, "p", F32, {3, 2});
  b.output("p");
  Program p = planned(programOf(b.ep, Stage::Edge));
  pte::ExecutionPlan plan = emit::emitProgram(p).executionPlan.at(0);
  // x, alloc, Int 1, Int 0, IntList [2, 3].
  REQUIRE(plan.values.size() == 5);
  CHECK(valueAs<pte::Int>(plan, 2).intVal == 1);
  CHECK(valueAs<pte::Int>(plan, 3).intVal == 0);
  CHECK(valueAs<pte::IntList>(plan, 4).items == std::vector<int64_t>{2, 3});
  CHECK(valueAs<pte::Tensor>(plan, 1).sizes == std::vector<int32_t>{3, 2});
  CHECK(kernelCall(plan, 0).args == std::vector<int32_t>{0, 4, 1, 1});
  CHECK(plan.operators.at(0).qualifiedName() == "aten::permute_copy.out");
}

TEST_CASE("emitter: None in Tensor and Tensor? positions", "[emit]") {
  GraphBuilder b;
  b.param("p_w", "conv.weight", F32, {2, 1, 1});
  b.input("x", F32, {1, 1, 4});
  b.edge("convolution.default",
         {pos("input", T("x")), pos("weight", T("p_w")), pos("bias", Argument::none()), pos("stride", Argument::ints_({1})),
          pos("padding", Argument::ints_({0})), pos("dilation", Argument::ints_({1})),
          pos("transposed", Argument::boolean(false)), pos("output_padding", Argument::ints_({0})),
          pos("groups", Argument::integer(1))},
         "c", F32, {1, 2, 4});
  // A None handed to a plain Tensor parameter (as upstream's emitter sees for
  // some optional-in-practice inputs) becomes an empty Byte tensor.
  b.edge("mul.Tensor", {pos("self", T("c")), pos("other", Argument::none())}, "m", F32, {1, 2, 4});
  b.output("m");
  Program p = planned(programOf(b.ep, Stage::Edge));
  p.constants.set("conv.weight", inlineConstant({2, 1, 1}, std::string(8, '\x01')));
  pte::Program out = emit::emitProgram(p);
  const pte::ExecutionPlan &plan = out.executionPlan.at(0);

  // p_w is a constant: data in the constant list, no allocation, not an input.
  const auto &w = valueAs<pte::Tensor>(plan, 0);
  CHECK(w.dataBufferIdx == 1);
  CHECK_FALSE(w.allocationInfo);
  CHECK(plan.inputs == std::vector<int32_t>{1});

  const pte::KernelCall &conv = kernelCall(plan, 0);
  REQUIRE(conv.args.size() == 11); // 9 schema args + out + return
  CHECK(std::holds_alternative<pte::Null>(plan.values.at(size_t(conv.args[2]))));
  CHECK(valueAs<pte::Bool>(plan, conv.args[6]).boolVal == false);
  CHECK(valueAs<pte::Int>(plan, conv.args[8]).intVal == 1);
  CHECK(conv.args[9] == conv.args[10]);

  const pte::KernelCall &mul = kernelCall(plan, 1);
  REQUIRE(mul.args.size() == 4);
  const auto &empty = valueAs<pte::Tensor>(plan, mul.args[1]);
  CHECK(empty.scalarType == ScalarType::Byte);
  CHECK(empty.sizes == std::vector<int32_t>{0});
  CHECK(empty.dimOrder == std::vector<uint8_t>{0});
  CHECK_FALSE(empty.allocationInfo);
  CHECK(empty.dataBufferIdx == 0);
}

TEST_CASE("emitter: a multi-output op returns a TensorList", "[emit]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  Node &max = b.edge("max.dim", {pos("self", T("x")), pos("dim", Argument::integer(1))}, "values", F32, {2});
  max.outputs.push_back(T("indices"));
  b.ep.graph.tensorValues.set("indices", meta(ScalarType::Long, {2}));
  b.output("values").output("indices");
  Program p = planned(programOf(b.ep, Stage::Edge));
  pte::ExecutionPlan plan = emit::emitProgram(p).executionPlan.at(0);
  // x, alloc, alloc_1, Int dim, Bool keepdim (default), TensorList.
  REQUIRE(plan.values.size() == 6);
  CHECK(valueAs<pte::Tensor>(plan, 2).scalarType == ScalarType::Long);
  CHECK(valueAs<pte::Int>(plan, 3).intVal == 1);
  CHECK(valueAs<pte::Bool>(plan, 4).boolVal == false);
  CHECK(valueAs<pte::TensorList>(plan, 5).items == std::vector<int32_t>{1, 2});
  CHECK(kernelCall(plan, 0).args == std::vector<int32_t>{0, 3, 4, 1, 2, 5});
  CHECK(plan.operators.at(0).qualifiedName() == "aten::max.dim_max");
  CHECK(plan.outputs == std::vector<int32_t>{1, 2});
  CHECK(plan.containerMetaType->encodedOutStr == "T2#1#1($,$)");
}

TEST_CASE("emitter: operators are deduplicated per plan, views are free", "[emit]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("x"))}, "a", F32, {2, 3});
  b.edge("relu.default", {pos("self", T("a"))}, "r", F32, {2, 3});
  b.edge("view_copy.default", {pos("self", T("r")), pos("size", Argument::ints_({6}))}, "v", F32, {6});
  b.edge("add.Tensor", {pos("self", T("v")), pos("other", T("v"))}, "a2", F32, {6});
  b.output("a2");
  Program p = planned(programOf(b.ep, Stage::Edge));
  const MemoryPlan &mp = *p.methods.find("forward")->plan;
  pte::ExecutionPlan plan = emit::emitProgram(p).executionPlan.at(0);
  REQUIRE(plan.operators.size() == 2);
  CHECK(plan.operators[0].qualifiedName() == "aten::add.out");
  CHECK(plan.operators[1].qualifiedName() == "aten::relu.out");
  REQUIRE(plan.chains.at(0).instructions.size() == 3); // the view has no instruction
  CHECK(kernelCall(plan, 0).opIndex == 0);
  CHECK(kernelCall(plan, 1).opIndex == 1);
  CHECK(kernelCall(plan, 2).opIndex == 0);
  // The view value has the view's shape and the base's storage.
  const pte::KernelCall &second = kernelCall(plan, 2);
  const auto &view = valueAs<pte::Tensor>(plan, second.args[0]);
  CHECK(view.sizes == std::vector<int32_t>{6});
  REQUIRE(view.allocationInfo);
  CHECK(view.allocationInfo->offset() == mp.allocations.find("r")->offset);
}

TEST_CASE("emitter: methods sorted by name, constants deduplicated by SHA-256", "[emit]") {
  auto method = [](const std::string &fqnA, const std::string &fqnB) {
    GraphBuilder b;
    b.param("p_a", fqnA, F32, {2}).param("p_b", fqnB, F32, {2});
    b.input("x", F32, {2});
    b.edge("mul.Tensor", {pos("self", T("x")), pos("other", T("p_a"))}, "m", F32, {2});
    b.edge("add.Tensor", {pos("self", T("m")), pos("other", T("p_b"))}, "a", F32, {2});
    b.output("a");
    return b.ep;
  };
  Program p;
  p.stage = Stage::Edge;
  p.methods.set("forward", Method{method("w_one", "w_two"), std::nullopt});
  p.methods.set("encode", Method{method("w_same_as_one", "w_three"), std::nullopt});
  std::string one("\x00\x00\x80\x3f\x00\x00\x00\x40", 8), two("\x00\x00\x40\x40\x00\x00\x80\x40", 8);
  p.constants.set("w_one", inlineConstant({2}, one));
  p.constants.set("w_two", inlineConstant({2}, two));
  p.constants.set("w_same_as_one", inlineConstant({2}, one));
  p.constants.set("w_three", inlineConstant({2}, std::string(8, '\0')));
  p = planned(std::move(p));
  pte::Program out = emit::emitProgram(p);

  REQUIRE(out.executionPlan.size() == 2);
  CHECK(out.executionPlan[0].name == "encode");
  CHECK(out.executionPlan[1].name == "forward");
  // [0] placeholder, then one, three (encode is emitted first), two.
  REQUIRE(out.constants.size() == 4);
  CHECK(out.constants[0].empty());
  CHECK(out.constants[1].bytes() == one);
  CHECK(out.constants[2].bytes() == std::string(8, '\0'));
  CHECK(out.constants[3].bytes() == two);
  const auto &encode = out.executionPlan[0];
  const auto &forward = out.executionPlan[1];
  CHECK(valueAs<pte::Tensor>(encode, 0).dataBufferIdx == 1);
  CHECK(valueAs<pte::Tensor>(encode, 1).dataBufferIdx == 2);
  CHECK(valueAs<pte::Tensor>(forward, 0).dataBufferIdx == 1); // same bytes as encode's p_a
  CHECK(valueAs<pte::Tensor>(forward, 1).dataBufferIdx == 3);
}

TEST_CASE("emitter: large constants that differ only in the middle are not merged", "[emit]") {
  // Constants of one size are told apart by their full bytes, not a sample.
  GraphBuilder b;
  b.param("p_a", "w_a", F32, {4096}).param("p_b", "w_b", F32, {4096}).param("p_c", "w_c", F32, {4096});
  b.input("x", F32, {4096});
  b.edge("mul.Tensor", {pos("self", T("x")), pos("other", T("p_a"))}, "m", F32, {4096});
  b.edge("add.Tensor", {pos("self", T("m")), pos("other", T("p_b"))}, "a", F32, {4096});
  b.edge("add.Tensor", {pos("self", T("a")), pos("other", T("p_c"))}, "c", F32, {4096});
  b.output("c");
  Program p;
  p.stage = Stage::Edge;
  p.methods.set("forward", Method{b.ep, std::nullopt});
  std::string a(4096 * 4, '\x11'), middle = a;
  middle[8192] = '\x22';
  p.constants.set("w_a", inlineConstant({4096}, a));
  p.constants.set("w_b", inlineConstant({4096}, middle));
  p.constants.set("w_c", inlineConstant({4096}, a));
  p = planned(std::move(p));
  pte::Program out = emit::emitProgram(p);

  REQUIRE(out.constants.size() == 3); // placeholder, a, middle
  CHECK(out.constants[1].bytes() == a);
  CHECK(out.constants[2].bytes() == middle);
  const auto &forward = out.executionPlan[0];
  CHECK(valueAs<pte::Tensor>(forward, 0).dataBufferIdx == 1);
  CHECK(valueAs<pte::Tensor>(forward, 1).dataBufferIdx == 2);
  CHECK(valueAs<pte::Tensor>(forward, 2).dataBufferIdx == 1); // same bytes as w_a
}

TEST_CASE("emitter: sym ops get an Int placeholder return, dim order from strides", "[emit]") {
  GraphBuilder b;
  b.input("x", F32, {1, 3, 2, 2});
  auto &strides = b.ep.graph.tensorValues.find("x")->strides;
  strides = {SymInt::of(12), SymInt::of(1), SymInt::of(6), SymInt::of(3)}; // channels last
  Argument sym = b.symSize("x", 1, "sym_size_int").outputs[0];
  b.ep.graph.symIntValues.set("sym_size_int", SymInt::of(3));
  b.ep.graph.outputs.push_back(sym);
  OutputSpec out;
  out.arg = sym;
  b.ep.signature.outputSpecs.push_back(out);
  Program p = planned(programOf(b.ep, Stage::Edge));
  pte::ExecutionPlan plan = emit::emitProgram(p).executionPlan.at(0);
  REQUIRE(plan.values.size() == 3);
  CHECK(valueAs<pte::Tensor>(plan, 0).dimOrder == std::vector<uint8_t>{0, 2, 3, 1});
  CHECK(valueAs<pte::Int>(plan, 1).intVal == 1);
  CHECK(valueAs<pte::Int>(plan, 2).intVal == 0);
  CHECK(kernelCall(plan, 0).args == std::vector<int32_t>{0, 1, 2});
  CHECK(plan.operators.at(0).name == "aten::sym_size");
  CHECK(plan.operators.at(0).overload == "int");
  CHECK(plan.outputs == std::vector<int32_t>{2});
}

TEST_CASE("emitter: refusals", "[emit]") {
  Program edge = programOf(addMethod(), Stage::Edge);
  CHECK(errorOf([&] { emit::emitProgram(edge); }) == "exir-emit needs a planned program, got stage 'edge'");

  GraphBuilder b;
  b.param("p_w", "w", F32, {2});
  b.input("x", F32, {2});
  b.edge("mul.Tensor", {pos("self", T("x")), pos("other", T("p_w"))}, "m", F32, {2});
  b.output("m");
  Program p = planned(programOf(b.ep, Stage::Edge));
  CHECK(errorOf([&] { emit::emitProgram(p); }) ==
        "/methods/forward/graph_module/signature/input_specs/0: no constant data for 'w' (input 'p_w')");
}

TEST_CASE("emitter: the recorded module call signature gives the pytree strings", "[emit]") {
  ExportedProgram ep = addMethod();
  ModuleCallSignature sig;
  sig.inSpec = R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", )"
               R"("context": "null", "children_spec": [{"type": null, "context": null, "children_spec": []}, )"
               R"({"type": null, "context": null, "children_spec": []}]}, {"type": "builtins.dict", "context": "[]", )"
               R"("children_spec": []}]}])";
  sig.outSpec = R"([1, {"type": "builtins.list", "context": "null", "children_spec": [{"type": null, "context": )"
                R"(null, "children_spec": []}]}])";
  ep.moduleCallGraph.push_back(ModuleCallEntry{"", sig});
  Program p = planned(programOf(ep, Stage::Edge));
  pte::ExecutionPlan plan = emit::emitProgram(p).executionPlan.at(0);
  CHECK(plan.containerMetaType->encodedInpStr == "T2#2#0(T2#1#1($,$),D0())");
  CHECK(plan.containerMetaType->encodedOutStr == "L1#1($)");
}

namespace {
const std::string kLeaf = R"({"type": null, "context": null, "children_spec": []})";
std::string node(const std::string &type, const std::string &context, const std::vector<std::string> &children) {
  std::string out = R"({"type": ")" + type + R"(", "context": )" + context + R"(, "children_spec": [)";
  for (size_t i = 0; i < children.size(); ++i) out += (i ? ", " : "") + children[i];
  return out + "]}";
}
std::string spec(const std::string &root) { return "[1, " + root + "]"; }
std::string tuple(const std::vector<std::string> &c) { return node("builtins.tuple", R"("null")", c); }
std::string list(const std::vector<std::string> &c) { return node("builtins.list", R"("null")", c); }
} // namespace

TEST_CASE("compactPytreeSpec reproduces the pte-format.md §3.8 examples", "[emit][pytree]") {
  CHECK(emit::compactPytreeSpec(spec(kLeaf)) == "$");
  CHECK(emit::compactPytreeSpec(spec(tuple({kLeaf, kLeaf}))) == "T2#1#1($,$)");
  std::string emptyDict = node("builtins.dict", R"("[]")", {});
  CHECK(emit::compactPytreeSpec(spec(tuple({tuple({kLeaf, kLeaf}), emptyDict}))) == "T2#2#0(T2#1#1($,$),D0())");
  CHECK(emit::compactPytreeSpec(spec(tuple({tuple({kLeaf}), emptyDict}))) == "T2#1#0(T1#1($),D0())");
  CHECK(emit::compactPytreeSpec(spec(list({kLeaf, kLeaf}))) == "L2#1#1($,$)");
  CHECK(emit::compactPytreeSpec(spec(node("builtins.dict", R"("[\"key0\", \"key1\"]")", {kLeaf, kLeaf}))) ==
        "D2#1#1('key0':$,'key1':$)");
  CHECK(emit::compactPytreeSpec(
            spec(node("builtins.dict", R"("[\"key0\", 1, 23, 123]")", {kLeaf, kLeaf, kLeaf, kLeaf}))) ==
        "D4#1#1#1#1('key0':$,1:$,23:$,123:$)");
  CHECK(emit::compactPytreeSpec(spec(tuple({kLeaf, kLeaf, list({kLeaf, kLeaf})}))) == "T3#1#1#2($,$,L2#1#1($,$))");
  // Leaf counts add up through nesting.
  CHECK(emit::compactPytreeSpec(spec(tuple({tuple({kLeaf, list({kLeaf, kLeaf})}), emptyDict}))) ==
        "T2#3#0(T2#1#2($,L2#1#1($,$)),D0())");
}

TEST_CASE("compactPytreeSpec: the arduino golden, empty and invalid specs", "[emit][pytree]") {
  // encoded_inp_str / encoded_out_str of the arduino AddModel (pte-format.md §3.8).
  std::string in = R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", )"
                   R"("context": "null", "children_spec": [{"type": null, "context": null, "children_spec": []}]}, )"
                   R"({"type": "builtins.dict", "context": "[]", "children_spec": []}]}])";
  CHECK(emit::compactPytreeSpec(in) == "T2#1#0(T1#1($),D0())");
  CHECK(emit::compactPytreeSpec(R"([1, {"type": null, "context": null, "children_spec": []}])") == "$");
  CHECK(emit::compactPytreeSpec("") == "");
  CHECK_THAT(errorOf([] { emit::compactPytreeSpec("[1, {"); }), Catch::StartsWith("pytree spec is not valid JSON: "));
  CHECK(errorOf([] { emit::compactPytreeSpec(R"({"type": null})"); }) ==
        "pytree spec must be [protocol, node], got object");
  // Once a nlohmann assertion (and, with assertions off, a read past the end).
  CHECK(errorOf([] { emit::compactPytreeSpec(R"([1, {"type": "builtins.tuple", "context": "null"}])"); }) ==
        "pytree spec /1: missing 'children_spec'");
  // Once an uncaught type_error.302 (exit 3).
  CHECK(errorOf([] { emit::compactPytreeSpec(R"([1, {"type": "builtins.dict", "context": 7, "children_spec": []}])"); }) ==
        "pytree spec /1: 'context' must be a string (JSON text) or null, got number");
}

namespace {
/// forward(x) = x * p_a + p_b on [2] floats; p_a and p_b lift `fqnA`, `fqnB`.
Program twoParamProgram(const std::string &fqnA, const std::string &fqnB) {
  GraphBuilder b;
  b.param("p_a", fqnA, F32, {2}).param("p_b", fqnB, F32, {2});
  b.input("x", F32, {2});
  b.edge("mul.Tensor", {pos("self", T("x")), pos("other", T("p_a"))}, "m", F32, {2});
  b.edge("add.Tensor", {pos("self", T("m")), pos("other", T("p_b"))}, "a", F32, {2});
  b.output("a");
  return programOf(b.ep, Stage::Edge);
}
} // namespace

TEST_CASE("emitter: tied weights share one constant, views of one storage get their own bytes", "[emit]") {
  // Tied (embedding / lm_head): two FQNs, one storage, the same view.
  std::string storage("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40", 16); // 1 2 3 4
  Program tied = twoParamProgram("embed.weight", "lm_head.weight");
  ConstantTensor whole = inlineConstant({4}, storage);
  ConstantTensor head = whole;
  head.sizes = {2};
  tied.constants.set("embed.weight", head);
  tied.constants.set("lm_head.weight", head);
  pte::Program out = emit::emitProgram(planned(std::move(tied)));
  REQUIRE(out.constants.size() == 2);
  CHECK(out.constants[1].bytes() == storage.substr(0, 8));
  CHECK(valueAs<pte::Tensor>(out.executionPlan[0], 0).dataBufferIdx == 1);
  CHECK(valueAs<pte::Tensor>(out.executionPlan[0], 1).dataBufferIdx == 1);

  // Two halves of one storage (a storage offset): two constants, the right bytes.
  Program halves = twoParamProgram("qkv.q", "qkv.k");
  ConstantTensor tail = head;
  tail.storageOffset = 2;
  halves.constants.set("qkv.q", head);
  halves.constants.set("qkv.k", tail);
  out = emit::emitProgram(planned(std::move(halves)));
  REQUIRE(out.constants.size() == 3);
  CHECK(out.constants[1].bytes() == storage.substr(0, 8));
  CHECK(out.constants[2].bytes() == storage.substr(8, 8));
  CHECK(valueAs<pte::Tensor>(out.executionPlan[0], 1).dataBufferIdx == 2);

  // A view reading past its storage names the constant.
  Program broken = twoParamProgram("a", "b");
  ConstantTensor past = head;
  past.storageOffset = 3;
  broken.constants.set("a", head);
  broken.constants.set("b", past);
  CHECK_THROWS_WITH(emit::emitProgram(planned(std::move(broken))),
                    Catch::Contains("constant 'b': the view reads 20 bytes of its storage but the data reference holds 16"));
}

TEST_CASE("emitter: external constants are EXTERNAL tensors with their FQN and .ptd entries", "[emit]") {
  std::string one("\x00\x00\x80\x3f\x00\x00\x00\x40", 8), two("\x00\x00\x40\x40\x00\x00\x80\x40", 8);
  Program p = twoParamProgram("layer.weight", "layer.bias");
  p.constants.set("layer.weight", inlineConstant({2}, one));
  p.constants.set("layer.bias", inlineConstant({2}, two));
  p = planned(std::move(p));

  emit::ExternalConstants external;
  external.matches = [](const std::string &fqn) { return fqn == "layer.weight"; };
  pte::Program out = emit::emitProgram(p, &external);
  const auto &weight = valueAs<pte::Tensor>(out.executionPlan[0], 0);
  REQUIRE(weight.extraTensorInfo);
  CHECK(weight.extraTensorInfo->fullyQualifiedName == "layer.weight");
  CHECK(weight.extraTensorInfo->location == pte::TensorDataLocation::External);
  CHECK(weight.dataBufferIdx == 0);
  // The bias stays in the constant segment.
  const auto &bias = valueAs<pte::Tensor>(out.executionPlan[0], 1);
  CHECK_FALSE(bias.extraTensorInfo);
  CHECK(bias.dataBufferIdx == 1);
  REQUIRE(out.constants.size() == 2);
  CHECK(out.constants[1].bytes() == two);

  REQUIRE(external.entries.size() == 1);
  CHECK(external.entries[0].key == "layer.weight");
  CHECK(external.entries[0].data.bytes() == one);
  REQUIRE(external.entries[0].tensorLayout);
  CHECK(external.entries[0].tensorLayout->scalarType == F32);
  CHECK(external.entries[0].tensorLayout->sizes == std::vector<int32_t>{2});
  CHECK(external.entries[0].tensorLayout->dimOrder == std::vector<uint8_t>{0});
}
