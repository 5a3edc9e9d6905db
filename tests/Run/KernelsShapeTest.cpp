//===- tests/Run/KernelsShapeTest.cpp - Data movement kernels -------------===//

#include "KernelsTestUtil.h"

using namespace exir;
using namespace exir::run;
using namespace exir::run::test;

namespace {
/// 0, 1, 2, ... as float32 with the given sizes.
} // namespace

TEST_CASE("view, permute, transpose, expand", "[kernels][shape]") {
  Value x = iota({2, 3}), size = intList({3, -1}), out = outOf();
  callOut("aten::view_copy.out", {&x, &size, &out});
  CHECK(sizesOf(out) == Sizes{3, 2});
  CHECK(valuesOf(out) == Doubles{0, 1, 2, 3, 4, 5});
  Value bad = intList({4, -1}), outBad = outOf();
  CHECK_THROWS_WITH(callOut("aten::view_copy.out", {&x, &bad, &outBad}),
                    Catch::Contains("aten::view_copy.out: shape [4, -1] is invalid for 6 elements"));

  Value y = iota({2, 3, 4}), dims = intList({2, 0, 1}), p = outOf();
  callOut("aten::permute_copy.out", {&y, &dims, &p});
  CHECK(sizesOf(p) == Sizes{4, 2, 3});
  // p[k][i][j] = y[i][j][k] = 12 i + 4 j + k
  CHECK(valuesOf(p) == Doubles{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  Tensor cl = Tensor::make(ScalarType::Float, {1, 1, 1, 1});
  cl.dimOrder = {0, 2, 3, 1};
  Value clv = Value::of(cl), dims4 = intList({0, 1, 2, 3}), pc = outOf();
  CHECK_THROWS_WITH(callOut("aten::permute_copy.out", {&clv, &dims4, &pc}),
                    Catch::Contains("aten::permute_copy.out: input and output dim orders differ"));

  Value d0 = i64(0), d1 = i64(1), t = outOf();
  callOut("aten::transpose_copy.int_out", {&x, &d0, &d1, &t});
  CHECK(valuesOf(t) == Doubles{0, 3, 1, 4, 2, 5});
  Value tt = outOf();
  callOut("aten::t_copy.out", {&x, &tt});
  CHECK(valuesOf(tt) == Doubles{0, 3, 1, 4, 2, 5});

  Value col = floats({2, 1}, {1, 2}), esize = intList({2, 2, -1}), implicit = Value::of(false), e = outOf();
  callOut("aten::expand_copy.out", {&col, &esize, &implicit, &e});
  CHECK(sizesOf(e) == Sizes{2, 2, 1});
  Value esize2 = intList({2, 3}), e2 = outOf();
  callOut("aten::expand_copy.out", {&col, &esize2, &implicit, &e2});
  CHECK(valuesOf(e2) == Doubles{1, 1, 1, 2, 2, 2});
  Value esize3 = intList({3, 3}), e3 = outOf();
  CHECK_THROWS_WITH(callOut("aten::expand_copy.out", {&col, &esize3, &implicit, &e3}), Catch::Contains("cannot expand"));
}

TEST_CASE("squeeze, unsqueeze, clone", "[kernels][shape]") {
  Value x = iota({1, 3, 1}), dims = intList({0, 2}), s = outOf();
  callOut("aten::squeeze_copy.dims_out", {&x, &dims, &s});
  CHECK(sizesOf(s) == Sizes{3});
  Value dim1 = intList({1}), s2 = outOf(); // squeezing a dim that is not 1 keeps it
  callOut("aten::squeeze_copy.dims_out", {&x, &dim1, &s2});
  CHECK(sizesOf(s2) == Sizes{1, 3, 1});
  Value s3 = outOf();
  callOut("aten::squeeze_copy.out", {&x, &s3});
  CHECK(sizesOf(s3) == Sizes{3});
  Value neg = i64(-1), u = outOf();
  callOut("aten::unsqueeze_copy.out", {&s, &neg, &u});
  CHECK(sizesOf(u) == Sizes{3, 1});
  CHECK(valuesOf(u) == Doubles{0, 1, 2});
  Value fmt = Value::none(), c = outOf();
  callOut("aten::clone.out", {&x, &fmt, &c});
  CHECK(sizesOf(c) == Sizes{1, 3, 1});
  Value wrongDtype = outOf(ScalarType::Long);
  CHECK_THROWS_WITH(callOut("aten::alias_copy.out", {&x, &wrongDtype}), Catch::Contains("same dtype"));
}

TEST_CASE("slice, select, split, unbind", "[kernels][shape]") {
  Value x = iota({2, 5}), dim = i64(1), start = i64(-4), noneV = Value::none(), step = i64(2), out = outOf();
  callOut("aten::slice_copy.Tensor_out", {&x, &dim, &start, &noneV, &step, &out});
  CHECK(sizesOf(out) == Sizes{2, 2});
  CHECK(valuesOf(out) == Doubles{1, 3, 6, 8});
  Value big = i64(100), one = i64(1), out2 = outOf(); // end past the size clamps
  callOut("aten::slice_copy.Tensor_out", {&x, &dim, &noneV, &big, &one, &out2});
  CHECK(sizesOf(out2) == Sizes{2, 5});
  Value idx = i64(-1), sel = outOf();
  callOut("aten::select_copy.int_out", {&x, &dim, &idx, &sel});
  CHECK(valuesOf(sel) == Doubles{4, 9});
  Value five = i64(5), selBad = outOf();
  CHECK_THROWS_WITH(callOut("aten::select_copy.int_out", {&x, &dim, &five, &selBad}), Catch::Contains("out of bounds"));

  Value a = outOf(), b = outOf(), sizes = intList({3, 2});
  Value outs = tensorList({&a, &b}), ret = Value::none();
  call("aten::split_with_sizes_copy.out", {&x, &sizes, &dim, &outs}, &ret);
  CHECK(valuesOf(a) == Doubles{0, 1, 2, 5, 6, 7});
  CHECK(valuesOf(b) == Doubles{3, 4, 8, 9});
  Value c = outOf(), d = outOf(), e = outOf(), two = i64(2);
  Value outs3 = tensorList({&c, &d, &e});
  call("aten::split_copy.Tensor_out", {&x, &two, &dim, &outs3}, &ret);
  CHECK(sizesOf(e) == Sizes{2, 1});
  CHECK(valuesOf(e) == Doubles{4, 9});
  Value u0 = outOf(), u1 = outOf(), zero = i64(0), uouts = tensorList({&u0, &u1});
  call("aten::unbind_copy.int_out", {&x, &zero, &uouts}, &ret);
  CHECK(sizesOf(u1) == Sizes{5});
  CHECK(valuesOf(u1) == Doubles{5, 6, 7, 8, 9});
}

TEST_CASE("cat and stack", "[kernels][shape]") {
  Value a = iota({2, 2}), b = floats({2, 1}, {10, 11}), empty = floats({0}, {});
  Value list = tensorList({&a, &empty, &b}), dim = i64(1), out = outOf();
  callOut("aten::cat.out", {&list, &dim, &out});
  CHECK(sizesOf(out) == Sizes{2, 3});
  CHECK(valuesOf(out) == Doubles{0, 1, 10, 2, 3, 11});
  Value l = longs({1, 2}, {7, 8}), mixed = tensorList({&a, &l}), zero = i64(0), out2 = outOf();
  callOut("aten::cat.out", {&mixed, &zero, &out2}); // int64 promotes to float32
  CHECK(valuesOf(out2) == Doubles{0, 1, 2, 3, 7, 8});
  Value bad = tensorList({&a, &b}), out3 = outOf();
  CHECK_THROWS_WITH(callOut("aten::cat.out", {&bad, &zero, &out3}), Catch::Contains("differ outside dim 0"));

  Value p = floats({2}, {1, 2}), q = floats({2}, {3, 4}), pq = tensorList({&p, &q}), s0 = outOf(), s1 = outOf();
  callOut("aten::stack.out", {&pq, &zero, &s0});
  CHECK(sizesOf(s0) == Sizes{2, 2});
  CHECK(valuesOf(s0) == Doubles{1, 2, 3, 4});
  Value last = i64(-1);
  callOut("aten::stack.out", {&pq, &last, &s1});
  CHECK(valuesOf(s1) == Doubles{1, 3, 2, 4});
}

TEST_CASE("constant_pad_nd pads and crops", "[kernels][shape]") {
  Value x = iota({2, 2}), pad = intList({1, 0, 0, 1}), value = Value::of(-1.0), out = outOf();
  callOut("aten::constant_pad_nd.out", {&x, &pad, &value, &out});
  CHECK(sizesOf(out) == Sizes{3, 3});
  CHECK(valuesOf(out) == Doubles{-1, 0, 1, -1, 2, 3, -1, -1, -1});
  Value crop = intList({-1, 1}), zero = i64(0), out2 = outOf();
  callOut("aten::constant_pad_nd.out", {&x, &crop, &zero, &out2});
  CHECK(sizesOf(out2) == Sizes{2, 2});
  CHECK(valuesOf(out2) == Doubles{1, 0, 3, 0});
}

TEST_CASE("flip, roll, repeat, tril, triu, scatters", "[kernels][shape]") {
  Value x = iota({2, 3}), dims = intList({0, 1}), f = outOf();
  callOut("aten::flip.out", {&x, &dims, &f});
  CHECK(valuesOf(f) == Doubles{5, 4, 3, 2, 1, 0});
  Value shifts = intList({1}), none = intList({}), r = outOf();
  callOut("aten::roll.out", {&x, &shifts, &none, &r});
  CHECK(valuesOf(r) == Doubles{5, 0, 1, 2, 3, 4});
  Value shifts2 = intList({1, -1}), dims2 = intList({0, 1}), r2 = outOf();
  callOut("aten::roll.out", {&x, &shifts2, &dims2, &r2});
  CHECK(valuesOf(r2) == Doubles{4, 5, 3, 1, 2, 0});

  Value small = floats({2}, {1, 2}), reps = intList({2, 2}), rep = outOf();
  callOut("aten::repeat.out", {&small, &reps, &rep});
  CHECK(sizesOf(rep) == Sizes{2, 4});
  CHECK(valuesOf(rep) == Doubles{1, 2, 1, 2, 1, 2, 1, 2});

  Value sq = iota({3, 3}), zero = Value::of(int64_t(0)), minus1 = Value::of(int64_t(-1)), lo = outOf(), up = outOf();
  callOut("aten::tril.out", {&sq, &zero, &lo});
  callOut("aten::triu.out", {&sq, &minus1, &up});
  CHECK(valuesOf(lo) == Doubles{0, 0, 0, 3, 4, 0, 6, 7, 8});
  CHECK(valuesOf(up) == Doubles{0, 1, 2, 3, 4, 5, 0, 7, 8});

  Value src = floats({3}, {-1, -2, -3}), dim1 = Value::of(int64_t(1)), idx = Value::of(int64_t(2)), ss = outOf();
  callOut("aten::select_scatter.out", {&sq, &src, &dim1, &idx, &ss});
  CHECK(valuesOf(ss) == Doubles{0, 1, -1, 3, 4, -2, 6, 7, -3});
  Value src2 = floats({1, 3}, {9, 9, 9}), start = Value::of(int64_t(1)), end = Value::of(int64_t(2)), one = Value::of(int64_t(1)), sl = outOf();
  callOut("aten::slice_scatter.out", {&sq, &src2, &zero, &start, &end, &one, &sl});
  CHECK(valuesOf(sl) == Doubles{0, 1, 2, 9, 9, 9, 6, 7, 8});
}
