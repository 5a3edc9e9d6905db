//===- tests/Run/KernelsPrimTest.cpp - sym ops, prim ops, copy_ ----------===//

#include "KernelsTestUtil.h"

using namespace exir;
using namespace exir::run;
using namespace exir::run::test;

namespace {
Value callScalar(const std::string &name, std::vector<Value> in) {
  std::vector<Value *> args;
  for (Value &v : in) args.push_back(&v);
  Value ret = Value::none();
  call(name, args, &ret);
  return ret;
}
} // namespace

TEST_CASE("sym_size, sym_numel, _local_scalar_dense", "[kernels][prim]") {
  Value x = floats({2, 3}, {0, 0, 0, 0, 0, 0});
  Value r = callScalar("aten::sym_size.int", {x, i64(-1)});
  CHECK(r.toInt() == 3);
  CHECK(callScalar("aten::sym_numel", {x}).toInt() == 6);
  CHECK_THROWS_WITH(callScalar("aten::sym_size.int", {x, i64(2)}), Catch::Contains("aten::sym_size.int: dimension 2 out of range"));
  CHECK(callScalar("aten::_local_scalar_dense", {longs({1}, {42})}).toInt() == 42);
  CHECK(callScalar("aten::_local_scalar_dense", {floats({}, {2.5})}).toDouble() == 2.5);
}

TEST_CASE("executorch_prim scalar ops keep Python's int/float rules", "[kernels][prim]") {
  CHECK(callScalar("executorch_prim::add.Scalar", {i64(2), i64(3)}).toInt() == 5);
  CHECK(callScalar("executorch_prim::add.Scalar", {i64(2), f64(0.5)}).toDouble() == 2.5);
  CHECK(callScalar("executorch_prim::mul.Scalar", {i64(-3), i64(4)}).toInt() == -12);
  CHECK(callScalar("executorch_prim::sub.Scalar", {f64(1), i64(3)}).toDouble() == -2);
  CHECK(callScalar("executorch_prim::floordiv.Scalar", {i64(-7), i64(2)}).toInt() == -4);
  CHECK(callScalar("executorch_prim::floordiv.int", {i64(7), i64(-2)}).toInt() == -4);
  CHECK(callScalar("executorch_prim::floordiv.Scalar", {f64(-7), i64(2)}).toDouble() == -4);
  CHECK(callScalar("executorch_prim::truediv.Scalar", {i64(7), i64(2)}).toDouble() == 3.5);
  CHECK(callScalar("executorch_prim::mod.Scalar", {i64(-7), i64(3)}).toInt() == 2);
  CHECK(callScalar("executorch_prim::mod.int", {i64(7), i64(-3)}).toInt() == -2);
  CHECK(callScalar("executorch_prim::eq.Scalar", {i64(2), f64(2.0)}).toBool());
  CHECK_FALSE(callScalar("executorch_prim::gt.Scalar", {i64(2), i64(3)}).toBool());
  CHECK(callScalar("executorch_prim::le.Scalar", {i64(3), i64(3)}).toBool());
  CHECK(callScalar("executorch_prim::neg.Scalar", {i64(3)}).toInt() == -3);
  CHECK(callScalar("executorch_prim::sym_float.Scalar", {i64(3)}).toDouble() == 3.0);
  CHECK(callScalar("executorch_prim::ceil.Scalar", {f64(2.1)}).toInt() == 3);
  CHECK(callScalar("executorch_prim::round.Scalar", {f64(2.5)}).toInt() == 2);
  CHECK(callScalar("executorch_prim::trunc.Scalar", {f64(-2.7)}).toInt() == -2);
  CHECK(callScalar("executorch_prim::sym_max.Scalar", {i64(2), i64(5)}).toInt() == 5);
  CHECK(callScalar("executorch_prim::sym_min.Scalar", {i64(2), f64(1.5)}).toDouble() == 1.5);
  CHECK_THROWS_WITH(callScalar("executorch_prim::floordiv.int", {i64(1), i64(0)}), Catch::Contains("division by zero"));
}

TEST_CASE("et_copy_index grows copy_to row by row", "[kernels][prim]") {
  Value copyTo = Value::of(Tensor::make(ScalarType::Float, {0, 2}));
  Value row0 = floats({2}, {1, 2}), row1 = floats({2}, {3, 4}), ret = Value::none();
  Value zero = i64(0), one = i64(1);
  call("executorch_prim::et_copy_index.tensor", {&copyTo, &row0, &zero}, &ret);
  call("executorch_prim::et_copy_index.tensor", {&copyTo, &row1, &one}, &ret);
  CHECK(sizesOf(copyTo) == std::vector<int64_t>{2, 2});
  CHECK(valuesOf(copyTo) == std::vector<double>{1, 2, 3, 4});
}

TEST_CASE("et_view aliases self's bytes", "[kernels][prim]") {
  Value self = floats({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor unplanned;
  unplanned.dtype = ScalarType::Float;
  Value out = Value::of(unplanned), size = intList({3, 2});
  call("executorch_prim::et_view.default", {&self, &size}, &out);
  CHECK(sizesOf(out) == std::vector<int64_t>{3, 2});
  CHECK(out.toTensor().data == self.toTensor().data);
  self.toTensor().ptr<float>()[5] = 50;
  CHECK(valuesOf(out).back() == 50);
}

TEST_CASE("copy_ copies with broadcasting and dtype conversion in place", "[kernels][prim]") {
  Value self = floats({2, 2}, {0, 0, 0, 0}), src = longs({2}, {7, 8}), nonBlocking = Value::of(false);
  call("aten::copy_", {&self, &src, &nonBlocking}, &self);
  CHECK(valuesOf(self) == std::vector<double>{7, 8, 7, 8});
}

TEST_CASE("runtime asserts left in Edge graphs are checked", "[kernels][prim]") {
  Value msg = str("expected a positive count"), none = Value::none();
  callScalar("aten::_assert_scalar", {Value::of(true), msg});
  CHECK_THROWS_WITH(callScalar("aten::_assert_scalar", {i64(0), msg}), "aten::_assert_scalar: expected a positive count");
  callScalar("aten::_assert_async.msg", {bools({2}, {1, 1}), msg});
  CHECK_THROWS(callScalar("aten::_assert_async.msg", {bools({2}, {1, 0}), msg}));
  callScalar("aten::sym_constrain_range_for_size", {i64(3), none, i64(10)});
  CHECK_THROWS_WITH(callScalar("aten::sym_constrain_range_for_size", {i64(-1), none, none}), Catch::Contains("[0, inf]"));
  CHECK_THROWS_WITH(callScalar("aten::sym_constrain_range", {i64(11), i64(2), i64(10)}), Catch::Contains("outside"));
  Value f = floats({2}, {0, 0});
  callScalar("aten::_assert_tensor_metadata", {f, intList({2}), none, Value::of(int64_t(ScalarType::Float)), none, none});
  CHECK_THROWS_WITH(callScalar("aten::_assert_tensor_metadata", {f, intList({3}), none, none, none, none}),
                    Catch::Contains("differ from the expected [3]"));
}
