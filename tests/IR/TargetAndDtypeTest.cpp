//===- tests/IR/TargetAndDtypeTest.cpp - Target spellings and dtype tables -===//
//
// parseTarget for every dialect spelling a graph can hold, the target
// builders, and the scalar type tables: c10 <-> torch.export serializer
// numbering for every dtype (torch-export-json.md §4.1), element sizes and
// the printed names.
//
//===----------------------------------------------------------------------===//
#include "IR/IR.h"

#include <catch2/catch.hpp>

#include <functional>

using namespace exir;

namespace {
struct Parsed {
  TargetDialect dialect;
  std::string ns, name, overload;
};
void checkTarget(const std::string &target, const Parsed &expected) {
  INFO(target);
  OpTarget t = parseTarget(target);
  CHECK(t.dialect == expected.dialect);
  CHECK(t.ns == expected.ns);
  CHECK(t.name == expected.name);
  CHECK(t.overload == expected.overload);
}
} // namespace

TEST_CASE("parseTarget: ATen dialect", "[target]") {
  checkTarget("torch.ops.aten.add.Tensor", {TargetDialect::Aten, "aten", "add", "Tensor"});
  checkTarget("torch.ops.aten.relu.default", {TargetDialect::Aten, "aten", "relu", "default"});
  checkTarget("torch.ops.aten.sym_size.int", {TargetDialect::Aten, "aten", "sym_size", "int"});
  checkTarget("torch.ops.aten._native_batch_norm_legit_no_training.default",
              {TargetDialect::Aten, "aten", "_native_batch_norm_legit_no_training", "default"});
  checkTarget("torch.ops.quantized_decomposed.quantize_per_tensor.default",
              {TargetDialect::Aten, "quantized_decomposed", "quantize_per_tensor", "default"});
  CHECK(parseTarget("torch.ops.aten.add.Tensor").qualifiedName() == "aten::add.Tensor");
  CHECK(parseTarget("torch.ops.aten.relu.default").qualifiedName() == "aten::relu");
  CHECK(parseTarget("torch.ops.aten.max.dim_max").qualifiedName() == "aten::max.dim_max");
}

TEST_CASE("parseTarget: edge and backend dialects", "[target]") {
  checkTarget("executorch.exir.dialects.edge.ops.aten.add.Tensor", {TargetDialect::Edge, "aten", "add", "Tensor"});
  checkTarget("executorch.exir.dialects.edge.ops.dim_order_ops._to_dim_order_copy.default",
              {TargetDialect::Edge, "dim_order_ops", "_to_dim_order_copy", "default"});
  checkTarget("executorch.exir.dialects.backend.ops.demo.fused_add.default",
              {TargetDialect::Backend, "demo", "fused_add", "default"});
  CHECK(parseTarget("executorch.exir.dialects.edge.ops.aten.convolution.default").qualifiedName() ==
        "aten::convolution");
}

TEST_CASE("parseTarget: higher-order, memory and sym ops", "[target]") {
  checkTarget("torch.ops.higher_order.executorch_call_delegate",
              {TargetDialect::HigherOrder, "higher_order", "executorch_call_delegate", ""});
  checkTarget("torch.ops.higher_order.cond", {TargetDialect::HigherOrder, "higher_order", "cond", ""});
  checkTarget("memory.alloc", {TargetDialect::MemoryAlloc, "memory", "alloc", ""});
  checkTarget("executorch.exir.memory.alloc", {TargetDialect::MemoryAlloc, "memory", "alloc", ""});
  checkTarget("memory.view", {TargetDialect::MemoryView, "memory", "view", ""});
  checkTarget("executorch.exir.memory.view", {TargetDialect::MemoryView, "memory", "view", ""});
  checkTarget("executorch.exir.memory.free", {TargetDialect::MemoryFree, "memory", "free", ""});
  checkTarget("_operator.add", {TargetDialect::SymOp, "_operator", "add", ""});
  checkTarget("_operator.floordiv", {TargetDialect::SymOp, "_operator", "floordiv", ""});
  checkTarget("math.trunc", {TargetDialect::SymOp, "math", "trunc", ""});
  checkTarget("torch.sym_max", {TargetDialect::SymOp, "torch", "sym_max", ""});
  CHECK(std::string(kAllocTarget) == "executorch.exir.memory.alloc");
  CHECK(parseTarget(kViewTarget).dialect == TargetDialect::MemoryView);
  CHECK(parseTarget(kDelegateTarget).dialect == TargetDialect::HigherOrder);
}

TEST_CASE("parseTarget: anything else is Other", "[target]") {
  checkTarget("my_module.my_function", {TargetDialect::Other, "", "my_module.my_function", ""});
  // An ATen target without an overload part cannot be split.
  CHECK(parseTarget("torch.ops.aten.add").dialect == TargetDialect::Other);
  CHECK(parseTarget("").dialect == TargetDialect::Other);
}

TEST_CASE("target builders round-trip through parseTarget", "[target]") {
  CHECK(atenTarget("aten", "add", "Tensor") == "torch.ops.aten.add.Tensor");
  CHECK(atenTarget("aten", "relu", "") == "torch.ops.aten.relu.default");
  CHECK(edgeTarget("aten", "add", "out") == "executorch.exir.dialects.edge.ops.aten.add.out");
  CHECK(edgeTarget("dim_order_ops", "_clone_dim_order", "") ==
        "executorch.exir.dialects.edge.ops.dim_order_ops._clone_dim_order.default");
  OpTarget t = parseTarget(edgeTarget("quantized_decomposed", "dequantize_per_tensor", "tensor"));
  CHECK(t.dialect == TargetDialect::Edge);
  CHECK(t.qualifiedName() == "quantized_decomposed::dequantize_per_tensor.tensor");
}

TEST_CASE("scalar types: serializer numbering of every dtype", "[dtype]") {
  // torch-export-json.md §4.1: serializer number, c10 type, element size, short name.
  struct Row {
    int64_t serialized;
    ScalarType type;
    size_t size;
    const char *shortName;
  };
  const Row rows[] = {
      {1, ScalarType::Byte, 1, "u8"},           {2, ScalarType::Char, 1, "i8"},
      {3, ScalarType::Short, 2, "i16"},         {4, ScalarType::Int, 4, "i32"},
      {5, ScalarType::Long, 8, "i64"},          {6, ScalarType::Half, 2, "f16"},
      {7, ScalarType::Float, 4, "f32"},         {8, ScalarType::Double, 8, "f64"},
      {9, ScalarType::ComplexHalf, 4, "c32"},   {10, ScalarType::ComplexFloat, 8, "c64"},
      {11, ScalarType::ComplexDouble, 16, "c128"}, {12, ScalarType::Bool, 1, "b8"},
      {13, ScalarType::BFloat16, 2, "bf16"},    {28, ScalarType::UInt16, 2, "u16"},
      {29, ScalarType::Float8_e4m3fn, 1, "f8e4m3fn"}, {30, ScalarType::Float8_e5m2, 1, "f8e5m2"},
      {31, ScalarType::Float8_e4m3fnuz, 1, "f8e4m3fnuz"}, {32, ScalarType::Float8_e5m2fnuz, 1, "f8e5m2fnuz"},
      {34, ScalarType::UInt32, 4, "u32"},       {35, ScalarType::UInt64, 8, "u64"},
  };
  for (const Row &r : rows) {
    INFO("serialized " << r.serialized);
    REQUIRE(scalarTypeFromSerialized(r.serialized));
    CHECK(*scalarTypeFromSerialized(r.serialized) == r.type);
    CHECK(scalarTypeToSerialized(r.type) == r.serialized);
    CHECK(elementSize(r.type) == r.size);
    CHECK(std::string(shortName(r.type)) == r.shortName);
  }
  // Values the serializer does not define.
  for (int64_t v : {int64_t(0), int64_t(14), int64_t(27), int64_t(33), int64_t(36), int64_t(-1)}) {
    INFO("serialized " << v);
    CHECK_FALSE(scalarTypeFromSerialized(v));
  }
}

TEST_CASE("scalar types: c10 round trip for every serializable dtype", "[dtype]") {
  int serializable = 0;
  for (int c10 = 0; c10 <= 29; ++c10) {
    ScalarType t = ScalarType(c10);
    INFO("c10 " << c10);
    CHECK(elementSize(t) > 0); // every c10 type up to UInt64 has a size
    int64_t s = scalarTypeToSerialized(t);
    if (s <= 0) continue; // quantized and bits types have no serializer number
    ++serializable;
    REQUIRE(scalarTypeFromSerialized(s));
    CHECK(*scalarTypeFromSerialized(s) == t);
  }
  CHECK(serializable == 20);
  // Quantized and bits types: c10 only.
  for (ScalarType t : {ScalarType::QInt8, ScalarType::QUInt8, ScalarType::QInt32, ScalarType::QUInt4x2,
                       ScalarType::QUInt2x4, ScalarType::Bits1x8, ScalarType::Bits16})
    CHECK(scalarTypeToSerialized(t) <= 0);
  CHECK(elementSize(ScalarType::QInt32) == 4);
  CHECK(elementSize(ScalarType::Bits16) == 2);
  CHECK(elementSize(ScalarType::Undefined) == 0);
}

TEST_CASE("scalar types: names and classes", "[dtype]") {
  CHECK(torchName(ScalarType::Float) == "torch.float32");
  CHECK(torchName(ScalarType::Long) == "torch.int64");
  CHECK(torchName(ScalarType::Bool) == "torch.bool");
  CHECK(torchName(ScalarType::BFloat16) == "torch.bfloat16");
  CHECK(std::string(edgeYamlName(ScalarType::Float)) == "Float");
  CHECK(std::string(edgeYamlName(ScalarType::ComplexHalf)).empty());
  CHECK(scalarTypeFromEdgeYamlName("Long") == ScalarType::Long);
  CHECK(scalarTypeFromEdgeYamlName("BFloat16") == ScalarType::BFloat16);
  CHECK(scalarTypeFromEdgeYamlName("Float32") == ScalarType::Undefined);
  CHECK(isFloatingType(ScalarType::Half));
  CHECK_FALSE(isFloatingType(ScalarType::Int));
  CHECK(isIntegralType(ScalarType::UInt16, false));
  CHECK(isIntegralType(ScalarType::Bool, true));
  CHECK_FALSE(isIntegralType(ScalarType::Bool, false));
  CHECK_FALSE(isIntegralType(ScalarType::Float, true));
}

TEST_CASE("TensorMeta helpers", "[ir]") {
  TensorMeta m;
  m.sizes = {SymInt::of(2), SymInt::of(3), SymInt::of(4)};
  CHECK(m.isStatic());
  CHECK(m.numel() == 24);
  auto strides = TensorMeta::contiguousStrides(m.sizes);
  REQUIRE(strides.size() == 3);
  CHECK(strides[0].value == 12);
  CHECK(strides[1].value == 4);
  CHECK(strides[2].value == 1);
  m.sizes[1] = SymInt::symbol("s0");
  CHECK_FALSE(m.isStatic());
  CHECK_FALSE(m.numel());
  auto symbolic = TensorMeta::contiguousStrides(m.sizes);
  CHECK(symbolic[2].value == 1);
  CHECK(symbolic[1].value == 4);
  CHECK(symbolic[0].isExpr); // depends on s0
  // Sizes whose product passes int64 (a fuzzer's 2^62 x 4): the strides
  // outside that range are unknown instead of an overflow.
  auto huge = TensorMeta::contiguousStrides({SymInt::of(2), SymInt::of(int64_t(1) << 62), SymInt::of(4)});
  CHECK(huge[2].value == 1);
  CHECK(huge[1].value == 4);
  CHECK(huge[0].isExpr);
}

TEST_CASE("Graph::freshName follows torch.fx numbering", "[ir]") {
  Graph g;
  CHECK(g.freshName("add") == "add");
  g.tensorValues.set("add", TensorMeta{});
  CHECK(g.freshName("add") == "add_1");
  g.tensorValues.set("add_1", TensorMeta{});
  g.symIntValues.set("add_2", SymInt::of(1));
  CHECK(g.freshName("add") == "add_3");
}

TEST_CASE("Graph::holdsValueName looks in every value table", "[ir]") {
  Graph empty;
  CHECK_FALSE(empty.holdsValueName("v"));
  std::vector<std::function<void(Graph &)>> holders = {
      [](Graph &g) { g.tensorValues.set("v", TensorMeta{}); },
      [](Graph &g) { g.symIntValues.set("v", SymInt::of(1)); },
      [](Graph &g) { g.symBoolValues.set("v", SymBool{}); },
      [](Graph &g) { g.symFloatValues.set("v", SymFloat{}); },
      [](Graph &g) { g.customObjValues.set("v", CustomObjValue{"v", "torch.classes.m.C"}); },
  };
  for (size_t k = 0; k < holders.size(); ++k) {
    INFO("table " << k);
    Graph g;
    holders[k](g);
    CHECK(g.holdsValueName("v"));
    CHECK_FALSE(g.holdsValueName("w"));
    CHECK(g.freshName("v") == "v_1");
  }
}

TEST_CASE("stage names", "[ir]") {
  for (Stage s : {Stage::Aten, Stage::Edge, Stage::Delegated, Stage::Planned}) CHECK(stageFromName(stageName(s)) == s);
  CHECK(std::string(stageName(Stage::Planned)) == "planned");
  CHECK_FALSE(stageFromName("Planned"));
}
