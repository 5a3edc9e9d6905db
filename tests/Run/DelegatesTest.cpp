//===- tests/Run/DelegatesTest.cpp - the demo backend's runtime semantics -===//
//
// BackendWithCompilerDemo as upstream's runtime test backend runs it
// (pte-format.md §7.5): records from the blob, mm then add wired to argument
// positions 0, 1 -> 3 and 2 + 3 -> 3, sin as x - x^3/6, float32 only, init
// checks on compile_specs[0] and the version.
//
//===----------------------------------------------------------------------===//
#include "Run/Delegates.h"
#include "Run/TensorData.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace exir::run;

namespace {

Value floats(std::vector<int64_t> sizes, std::vector<double> values, ScalarType dtype = ScalarType::Float) {
  Tensor t = Tensor::make(dtype, std::move(sizes));
  fillFromDoubles(t, values);
  return Value::of(std::move(t));
}

const std::vector<CompileSpec> kMaxValue4 = {CompileSpec{"max_value", std::string(1, '\4')}};

void runDemo(const std::string &blob, std::vector<Value> &args, const std::vector<CompileSpec> &specs = kMaxValue4) {
  std::vector<Value *> ptrs;
  for (auto &a : args) ptrs.push_back(&a);
  runBackendBlob("BackendWithCompilerDemo", blob, specs, std::span<Value *>(ptrs), RunOptions{});
}

const std::string kMmAdd = "2version:0#op:demo::aten.mm.default, numel:4, dtype:torch.float32<debug_handle>1#"
                           "op:demo::aten.add.Tensor, numel:4, dtype:torch.float32<debug_handle>2#";

} // namespace

TEST_CASE("demo backend: mm then add computes a @ x + b", "[run][delegate]") {
  std::vector<Value> args = {floats({2, 2}, {1, 2, 3, 4}), floats({2, 2}, {1, 0, 0, 1}), floats({2, 2}, {10, 20, 30, 40}),
                             floats({2, 2}, {0, 0, 0, 0})};
  runDemo(kMmAdd, args);
  CHECK(toDoubles(args[3].toTensor()) == std::vector<double>{11, 22, 33, 44});
}

TEST_CASE("demo backend: sin is x - x^3/6", "[run][delegate]") {
  std::vector<Value> args = {floats({1}, {1}), floats({1}, {0})};
  runDemo("1version:0#op:demo::aten.sin.default, numel:1, dtype:torch.float32<debug_handle>1#", args);
  CHECK(toDoubles(args[1].toTensor())[0] == Approx(5.0 / 6.0));
}

TEST_CASE("demo backend: init and execute refuse what upstream refuses", "[run][delegate]") {
  std::vector<Value> args = {floats({2, 2}, {1, 2, 3, 4}), floats({2, 2}, {1, 0, 0, 1}), floats({2, 2}, {0, 0, 0, 0}),
                             floats({2, 2}, {0, 0, 0, 0})};
  CHECK_THROWS_WITH(runDemo(kMmAdd, args, {}), Catch::Contains("compile spec"));
  CHECK_THROWS_WITH(runDemo(kMmAdd, args, {CompileSpec{"max_value", std::string(1, '\5')}}), Catch::Contains("<= 4"));
  std::string v1 = kMmAdd;
  v1.replace(v1.find("version:0"), 9, "version:1");
  CHECK_THROWS_WITH(runDemo(v1, args), Catch::Contains("version"));
  CHECK_THROWS_WITH(runDemo("1version:0#op:demo::aten.sin.default, numel:1, dtype:torch.int64<debug_handle>1#", args),
                    Catch::Contains("float32 only"));
  CHECK_THROWS_WITH(runDemo("1version:0#op:demo::aten.linear.default, numel:4, dtype:torch.float32<debug_handle>1#", args),
                    Catch::Contains("not executed by upstream's test backend"));
  std::vector<Value> three(args.begin(), args.begin() + 3);
  CHECK_THROWS_WITH(runDemo("1version:0#op:demo::aten.add.Tensor, numel:4, dtype:torch.float32<debug_handle>1#", three),
                    Catch::Contains("uses delegate argument 3, but the call has 3 arguments"));
}
