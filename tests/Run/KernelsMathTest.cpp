//===- tests/Run/KernelsMathTest.cpp - linalg, reductions, softmax, norms -===//

#include "KernelsTestUtil.h"

#include <cmath>
#include <limits>

using namespace exir;
using namespace exir::run;
using namespace exir::run::test;

TEST_CASE("mm, bmm, addmm", "[kernels][linalg]") {
  Value a = floats({2, 2}, {1, 2, 3, 4}), b = floats({2, 2}, {5, 6, 7, 8}), out = outOf();
  callOut("aten::mm.out", {&a, &b, &out});
  CHECK(valuesOf(out) == Doubles{19, 22, 43, 50});
  Value c = floats({2, 3}, {1, 0, 2, 0, 1, 3}), d = floats({3, 1}, {1, 2, 3}), out2 = outOf();
  callOut("aten::mm.out", {&c, &d, &out2});
  CHECK(sizesOf(out2) == Sizes{2, 1});
  CHECK(valuesOf(out2) == Doubles{7, 11});
  Value bad = outOf();
  CHECK_THROWS_WITH(callOut("aten::mm.out", {&c, &c, &bad}), Catch::Contains("cannot be multiplied"));

  Value ba = floats({2, 1, 2}, {1, 2, 3, 4}), bb = floats({2, 2, 1}, {1, 1, 2, -1}), bo = outOf();
  callOut("aten::bmm.out", {&ba, &bb, &bo});
  CHECK(sizesOf(bo) == Sizes{2, 1, 1});
  CHECK(valuesOf(bo) == Doubles{3, 2});

  Value bias = floats({2}, {10, 20}), beta = i64(2), alpha = f64(0.5), ao = outOf();
  callOut("aten::addmm.out", {&bias, &a, &b, &beta, &alpha, &ao});
  CHECK(valuesOf(ao) == Doubles{29.5, 51, 41.5, 65});
  Value nanBias = floats({1}, {kNaN}), zero = i64(0), one = i64(1), ao2 = outOf();
  callOut("aten::addmm.out", {&nanBias, &a, &b, &zero, &one, &ao2});
  CHECK(valuesOf(ao2) == Doubles{19, 22, 43, 50}); // beta = 0 ignores self
}

TEST_CASE("sum, mean, prod, cumsum", "[kernels][reduce]") {
  Value x = floats({2, 3}, {1, 2, 3, 4, 5, 6}), dims = intList({1}), keep = flag(true), none = Value::none();
  Value s = outOf();
  callOut("aten::sum.IntList_out", {&x, &dims, &keep, &none, &s});
  CHECK(sizesOf(s) == Sizes{2, 1});
  CHECK(valuesOf(s) == Doubles{6, 15});
  Value all = Value::none(), noKeep = flag(false), s2 = outOf();
  callOut("aten::sum.IntList_out", {&x, &all, &noKeep, &none, &s2});
  CHECK(sizesOf(s2).empty());
  CHECK(valuesOf(s2) == Doubles{21});
  Value ints = tensorValue<int>(ScalarType::Int, {3}, {1, 2, 3}), s3 = outOf(ScalarType::Long), empty = intList({});
  callOut("aten::sum.IntList_out", {&ints, &empty, &noKeep, &none, &s3});
  CHECK(valuesOf<int64_t>(s3) == std::vector<int64_t>{6});
  Value dtypeF = i64(int64_t(ScalarType::Double)), s4 = outOf(ScalarType::Float);
  CHECK_THROWS_WITH(callOut("aten::sum.IntList_out", {&x, &dims, &keep, &dtypeF, &s4}), Catch::Contains("differs from dtype"));

  Value dim0 = intList({0}), m = outOf();
  callOut("aten::mean.out", {&x, &dim0, &noKeep, &none, &m});
  CHECK(valuesOf(m) == Doubles{2.5, 3.5, 4.5});
  Value neg = intList({-1, 0}), m2 = outOf();
  callOut("aten::mean.out", {&x, &neg, &keep, &none, &m2});
  CHECK(sizesOf(m2) == Sizes{1, 1});
  CHECK(valuesOf(m2) == Doubles{3.5});

  Value one = i64(1), p = outOf();
  callOut("aten::prod.int_out", {&x, &one, &noKeep, &none, &p});
  CHECK(valuesOf(p) == Doubles{6, 120});
  Value c = outOf();
  callOut("aten::cumsum.out", {&x, &one, &none, &c});
  CHECK(valuesOf(c) == Doubles{1, 3, 6, 4, 9, 15});
  Value zero = i64(0), c0 = outOf();
  callOut("aten::cumsum.out", {&x, &zero, &none, &c0});
  CHECK(valuesOf(c0) == Doubles{1, 2, 3, 5, 7, 9});
}

TEST_CASE("amax, argmax, max.dim, any, var, logsumexp, norm", "[kernels][reduce]") {
  Value x = floats({2, 3}, {1, 5, 5, kNaN, 0, 2}), dims = intList({1}), noKeep = flag(false), keep = flag(true);
  Value mx = outOf(), mn = outOf();
  callOut("aten::amax.out", {&x, &dims, &noKeep, &mx});
  callOut("aten::amin.out", {&x, &dims, &noKeep, &mn});
  checkClose(valuesOf(mx), {5, kNaN});
  checkClose(valuesOf(mn), {1, kNaN});

  Value one = i64(1), am = outOf(ScalarType::Long);
  callOut("aten::argmax.out", {&x, &one, &noKeep, &am});
  CHECK(valuesOf<int64_t>(am) == std::vector<int64_t>{1, 0}); // first max; NaN is the max
  Value y = floats({2, 2}, {3, 1, 4, 1}), none = Value::none(), amAll = outOf(ScalarType::Long);
  callOut("aten::argmin.out", {&y, &none, &noKeep, &amAll});
  CHECK(sizesOf(amAll).empty());
  CHECK(valuesOf<int64_t>(amAll) == std::vector<int64_t>{1});

  Value values = outOf(), indices = outOf(ScalarType::Long), zero = i64(0);
  Value rets = tensorList({&values, &indices});
  call("aten::max.dim_max", {&y, &zero, &keep, &values, &indices}, &rets);
  CHECK(sizesOf(values) == Sizes{1, 2});
  CHECK(valuesOf(values) == Doubles{4, 1});
  CHECK(valuesOf<int64_t>(indices) == std::vector<int64_t>{1, 0});

  Value b = bools({2, 2}, {0, 0, 0, 1}), anyOut = outOf(ScalarType::Bool), anyAll = outOf(ScalarType::Bool);
  callOut("aten::any.out", {&b, &one, &noKeep, &anyOut});
  CHECK(valuesOf<int>(anyOut) == std::vector<int>{0, 1});
  callOut("aten::any.all_out", {&b, &anyAll});
  CHECK(valuesOf<int>(anyAll) == std::vector<int>{1});

  Value v = floats({4}, {1, 2, 3, 4}), all = Value::none(), var1 = outOf(), var0 = outOf(), corr0 = i64(0);
  callOut("aten::var.correction_out", {&v, &all, &none, &noKeep, &var1});
  callOut("aten::var.correction_out", {&v, &all, &corr0, &noKeep, &var0});
  checkClose(valuesOf(var1), {5.0 / 3});
  checkClose(valuesOf(var0), {1.25});

  Value big = floats({2}, {1000, 1000}), zeroDim = intList({0}), lse = outOf();
  callOut("aten::logsumexp.out", {&big, &zeroDim, &noKeep, &lse});
  checkClose(valuesOf(lse), {1000 + std::log(2.0)});

  Value w = floats({2}, {3, -4}), two = i64(2), nrm = outOf();
  callOut("aten::linalg_vector_norm.out", {&w, &two, &all, &noKeep, &none, &nrm});
  checkClose(valuesOf(nrm), {5});
}

TEST_CASE("softmax and log_softmax are stable", "[kernels][softmax]") {
  const Doubles expected{0.09003057317038046, 0.24472847105479767, 0.6652409557748219};
  Value x = floats({3}, {1, 2, 3}), big = floats({3}, {1000, 1001, 1002}), dim = i64(-1), h2f = flag(false);
  Value s = outOf(), sBig = outOf();
  callOut("aten::_softmax.out", {&x, &dim, &h2f, &s});
  callOut("aten::_softmax.out", {&big, &dim, &h2f, &sBig});
  checkClose(valuesOf(s), expected);
  checkClose(valuesOf(sBig), expected);
  Value ls = outOf();
  callOut("aten::_log_softmax.out", {&big, &dim, &h2f, &ls});
  checkClose(valuesOf(ls), {std::log(expected[0]), std::log(expected[1]), std::log(expected[2])});

  // Over dim 0 of a [2, 2]: columns normalize.
  Value m = floats({2, 2}, {0, 1, 0, 3}), zero = i64(0), sm = outOf();
  callOut("aten::_softmax.out", {&m, &zero, &h2f, &sm});
  double e2 = std::exp(2.0);
  checkClose(valuesOf(sm), {0.5, 1 / (1 + e2), 0.5, e2 / (1 + e2)});
  Value ints = longs({2}, {1, 2}), io = outOf(ScalarType::Long);
  CHECK_THROWS_WITH(callOut("aten::_softmax.out", {&ints, &zero, &h2f, &io}), Catch::Contains("floating"));
}

TEST_CASE("layer norm, group norm, batch norm", "[kernels][norm]") {
  Value x = floats({2, 4}, {1, 2, 3, 4, 2, 2, 2, 2}), shape = intList({4}), w = floats({4}, {1, 1, 2, 2}),
        b = floats({4}, {0, 0, 0, 1}), eps = f64(0.0);
  Value out = outOf(), mean = outOf(), rstd = outOf(), rets = tensorList({&out, &mean, &rstd});
  Value epsSmall = f64(1e-5);
  call("aten::native_layer_norm.out", {&x, &shape, &w, &b, &epsSmall, &out, &mean, &rstd}, &rets);
  double r = 1 / std::sqrt(1.25 + 1e-5);
  CHECK(sizesOf(mean) == Sizes{2, 1});
  checkClose(valuesOf(mean), {2.5, 2});
  checkClose(valuesOf(rstd), {r, 1 / std::sqrt(1e-5)});
  checkClose(valuesOf(out), {-1.5 * r, -0.5 * r, 2 * 0.5 * r, 2 * 1.5 * r + 1, 0, 0, 0, 1});

  Value g = floats({1, 4, 1}, {1, 3, 10, 20}), none = Value::none(), n = i64(1), c = i64(4), hw = i64(1), groups = i64(2);
  Value gout = outOf(), gmean = outOf(), grstd = outOf(), grets = tensorList({&gout, &gmean, &grstd});
  call("aten::native_group_norm.out", {&g, &none, &none, &n, &c, &hw, &groups, &eps, &gout, &gmean, &grstd}, &grets);
  CHECK(sizesOf(gmean) == Sizes{1, 2});
  checkClose(valuesOf(gmean), {2, 15});
  checkClose(valuesOf(grstd), {1, 0.2});
  checkClose(valuesOf(gout), {-1, 1, -1, 1});

  Value bx = floats({2, 2}, {1, 2, 3, 4}), rm = floats({2}, {1, 2}), rv = floats({2}, {4, 1}), bw = floats({2}, {1, 2}),
        bb = floats({2}, {0, 1}), momentum = f64(0.1);
  Value bout = outOf(), s1 = outOf(), s2 = outOf(), brets = tensorList({&bout, &s1, &s2});
  call("aten::_native_batch_norm_legit_no_training.out", {&bx, &bw, &bb, &rm, &rv, &momentum, &eps, &bout, &s1, &s2}, &brets);
  CHECK(valuesOf(bout) == Doubles{0, 1, 1, 5});
  CHECK(s1.toTensor().numel() == 0);

  Value runMean = floats({2}, {0, 0}), runVar = floats({2}, {1, 1}), training = flag(true);
  Value tout = outOf(), tmean = outOf(), tinv = outOf(), trets = tensorList({&tout, &tmean, &tinv});
  call("aten::_native_batch_norm_legit.out",
       {&bx, &none, &none, &runMean, &runVar, &training, &momentum, &eps, &tout, &tmean, &tinv}, &trets);
  checkClose(valuesOf(tout), {-1, -1, 1, 1});
  checkClose(valuesOf(tmean), {2, 3});
  checkClose(valuesOf(tinv), {1, 1});
  checkClose(valuesOf(runMean), {0.2, 0.3});
  checkClose(valuesOf(runVar), {1.1, 1.1});

  Value nout = outOf(), nmean = outOf(), ninv = outOf(), nrets = tensorList({&nout, &nmean, &ninv});
  call("aten::_native_batch_norm_legit.no_stats_out", {&bx, &none, &none, &training, &momentum, &eps, &nout, &nmean, &ninv}, &nrets);
  checkClose(valuesOf(nout), {-1, -1, 1, 1});

  Value inference = flag(false), nb = outOf(), nb1 = outOf(), nb2 = outOf(), nbrets = tensorList({&nb, &nb1, &nb2});
  call("aten::native_batch_norm.out", {&bx, &bw, &bb, &rm, &rv, &inference, &momentum, &eps, &nb, &nb1, &nb2}, &nbrets);
  CHECK(valuesOf(nb) == Doubles{0, 1, 1, 5});
  Value nt = outOf(), nt1 = outOf(), nt2 = outOf();
  call("aten::native_batch_norm.out", {&bx, &none, &none, &none, &none, &training, &momentum, &eps, &nt, &nt1, &nt2}, &nbrets);
  checkClose(valuesOf(nt), {-1, -1, 1, 1});
  checkClose(valuesOf(nt1), {2, 3});
}
