//===- tests/Run/KernelsRegistryTest.cpp - Kernel names and arities -------===//

#include "KernelsTestUtil.h"

#include "Ops/OperatorTable.h"

using namespace exir;
using namespace exir::run;
using namespace exir::run::test;

TEST_CASE("every registered kernel is an op of the table", "[kernels][registry]") {
  const OperatorTable &table = OperatorTable::builtin();
  std::vector<std::string> names = KernelRegistry::global().names();
  REQUIRE(names.size() > 140);
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (const std::string &name : names) {
    INFO(name);
    const OpSchema *schema = table.lookup(name);
    REQUIRE(schema);
    // The registry key is the runtime's: "ns::name.overload" with the overload
    // spelled out ("default" only for et_view, as the emitter writes it).
    CHECK(name.find("::") != std::string::npos);
    // A call with the wrong arity is refused with the schema's count + 1.
    std::vector<Value> values(schema->arguments.size());
    std::vector<Value *> args;
    for (Value &v : values) args.push_back(&v);
    const KernelFn *fn = KernelRegistry::global().find(name);
    REQUIRE(fn);
    CHECK_THROWS_WITH((*fn)(std::span<Value *>(args)),
                      Catch::Contains(name + ": expected " + std::to_string(schema->arguments.size() + 1) +
                                      " arguments, got " + std::to_string(args.size())));
  }
}

TEST_CASE("the registry finds by exact name only", "[kernels][registry]") {
  CHECK(KernelRegistry::global().find("aten::add.out"));
  CHECK_FALSE(KernelRegistry::global().find("aten::add"));
  CHECK_FALSE(KernelRegistry::global().find("add.out"));
  CHECK_THROWS_AS(KernelRegistry::global().add("aten::add.out", [](std::span<Value *>) {}), InternalError);
}

TEST_CASE("Value accessors name both kinds on a mismatch", "[kernels][value]") {
  Value i = Value::of(int64_t(3));
  CHECK(i.toDouble() == 3.0);
  CHECK_THROWS_WITH(i.toTensor(), "expected Tensor argument, got Int");
  CHECK_THROWS_WITH(Value::none().toIntList(), "expected IntList argument, got None");
  CHECK(Value::none().toOptionalTensor() == nullptr);
  CHECK_THROWS_WITH(Value::of(true).toInt(), "expected Int argument, got Bool");
}

TEST_CASE("Tensor strides, contiguity and resize", "[kernels][value]") {
  Tensor t = Tensor::make(ScalarType::Float, {2, 3, 4, 5});
  CHECK(t.strides() == std::vector<int64_t>{60, 20, 5, 1});
  CHECK(t.isContiguous());
  t.dimOrder = {0, 2, 3, 1};
  CHECK(t.strides() == std::vector<int64_t>{60, 1, 15, 3});
  CHECK_FALSE(t.isContiguous());
  t.resize({2, 3, 4, 5});
  CHECK(t.dimOrder == std::vector<uint8_t>{0, 2, 3, 1}); // same rank keeps the dim order
  t.resize({120});
  CHECK(t.dimOrder == std::vector<uint8_t>{0});
  t.resize({200}); // owned tensors grow
  CHECK(t.capacity == 800);
  CHECK(t.nbytes() == 800);

  std::vector<int64_t> arena(4);
  Tensor planned;
  planned.dtype = ScalarType::Long;
  planned.sizes = {4};
  planned.dimOrder = {0};
  planned.data = reinterpret_cast<uint8_t *>(arena.data());
  planned.capacity = 32;
  planned.resize({2, 2});
  CHECK(planned.numel() == 4);
  planned.resize({1});
  CHECK_THROWS_WITH(planned.resize({5}), Catch::Contains("needs 40 bytes, its planned capacity is 32"));
}
