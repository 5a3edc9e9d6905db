//===- tests/Run/KernelsMiscTest.cpp - padding, sorting, less common ops --===//

#include "KernelsTestUtil.h"

#include "Run/Kernels/Random.h"

#include <algorithm>

#include <cmath>
#include <limits>

using namespace exir;
using namespace exir::run;
using namespace exir::run::test;

TEST_CASE("as_strided, diagonal, unfold, pixel_shuffle, copy", "[kernels][shape]") {
  Value x = iota({6}), size = intList({2, 2}), stride = intList({1, 2}), offset = i64(1), out = outOf();
  callOut("aten::as_strided_copy.out", {&x, &size, &stride, &offset, &out});
  CHECK(valuesOf(out) == Doubles{1, 3, 2, 4});
  Value far = i64(3), bad = outOf();
  CHECK_THROWS_WITH(callOut("aten::as_strided_copy.out", {&x, &size, &stride, &far, &bad}), Catch::Contains("out of the bounds"));

  Value m = iota({3, 3}), zero = i64(0), one = i64(1), minus1 = i64(-1), d0 = outOf(), d1 = outOf(), dm = outOf();
  callOut("aten::diagonal_copy.out", {&m, &zero, &zero, &one, &d0});
  callOut("aten::diagonal_copy.out", {&m, &one, &zero, &one, &d1});
  callOut("aten::diagonal_copy.out", {&m, &minus1, &zero, &one, &dm});
  CHECK(valuesOf(d0) == Doubles{0, 4, 8});
  CHECK(valuesOf(d1) == Doubles{1, 5});
  CHECK(valuesOf(dm) == Doubles{3, 7});

  Value v = iota({5}), two = i64(2), u = outOf();
  callOut("aten::unfold_copy.out", {&v, &zero, &two, &two, &u});
  CHECK(sizesOf(u) == Sizes{2, 2});
  CHECK(valuesOf(u) == Doubles{0, 1, 2, 3});

  Value p = iota({1, 4, 1, 2}), ps = outOf(), pu = outOf();
  callOut("aten::pixel_shuffle.out", {&p, &two, &ps});
  CHECK(sizesOf(ps) == Sizes{1, 1, 2, 4});
  CHECK(valuesOf(ps) == Doubles{0, 2, 1, 3, 4, 6, 5, 7});
  callOut("aten::pixel_unshuffle.out", {&ps, &two, &pu});
  CHECK(sizesOf(pu) == Sizes{1, 4, 1, 2});
  CHECK(valuesOf(pu) == valuesOf(p));

  Value self = floats({2, 2}, {0, 0, 0, 0}), src = longs({2}, {3, 4}), nb = flag(false), c = outOf();
  callOut("aten::copy.out", {&self, &src, &nb, &c});
  CHECK(valuesOf(c) == Doubles{3, 4, 3, 4});
}

TEST_CASE("reflection and replication padding", "[kernels][pad]") {
  Value x = floats({1, 2, 2}, {1, 2, 3, 4}), pad = intList({1, 1, 0, 0}), r = outOf();
  callOut("aten::reflection_pad2d.out", {&x, &pad, &r});
  CHECK(sizesOf(r) == Sizes{1, 2, 4});
  CHECK(valuesOf(r) == Doubles{2, 1, 2, 1, 4, 3, 4, 3});
  Value pad2 = intList({1, 0, 1, 0}), rep = outOf();
  callOut("aten::replication_pad2d.out", {&x, &pad2, &rep});
  CHECK(sizesOf(rep) == Sizes{1, 3, 3});
  CHECK(valuesOf(rep) == Doubles{1, 1, 2, 1, 1, 2, 3, 3, 4});
  Value tooBig = intList({2, 0, 0, 0}), bad = outOf();
  CHECK_THROWS_WITH(callOut("aten::reflection_pad2d.out", {&x, &tooBig, &bad}), Catch::Contains("less than"));
  Value y = floats({1, 1, 3}, {1, 2, 3}), pad1 = intList({2, 1}), r1 = outOf();
  callOut("aten::reflection_pad1d.out", {&y, &pad1, &r1});
  CHECK(valuesOf(r1) == Doubles{3, 2, 1, 2, 3, 2});
}

TEST_CASE("sort and topk", "[kernels][sort]") {
  Value x = floats({4}, {3, kNaN, 1, 2}), dim = i64(-1), no = flag(false), yes = flag(true);
  Value v = outOf(), i = outOf(ScalarType::Long), rets = tensorList({&v, &i});
  call("aten::sort.values", {&x, &dim, &no, &v, &i}, &rets);
  checkClose(valuesOf(v), {1, 2, 3, kNaN});
  CHECK(valuesOf<int64_t>(i) == Longs{2, 3, 0, 1});
  Value vd = outOf(), id = outOf(ScalarType::Long);
  call("aten::sort.values", {&x, &dim, &yes, &vd, &id}, &rets);
  checkClose(valuesOf(vd), {kNaN, 3, 2, 1});
  CHECK(valuesOf<int64_t>(id) == Longs{1, 0, 3, 2});

  Value y = floats({5}, {3, 1, 4, 1, 5}), k = i64(2), tv = outOf(), ti = outOf(ScalarType::Long);
  call("aten::topk.values", {&y, &k, &dim, &yes, &yes, &tv, &ti}, &rets);
  CHECK(valuesOf(tv) == Doubles{5, 4});
  CHECK(valuesOf<int64_t>(ti) == Longs{4, 2});
  Value sv = outOf(), si = outOf(ScalarType::Long);
  call("aten::topk.values", {&y, &k, &dim, &no, &yes, &sv, &si}, &rets);
  CHECK(valuesOf(sv) == Doubles{1, 1});
  CHECK(valuesOf<int64_t>(si) == Longs{1, 3}); // ties keep their order
  Value m = floats({2, 2}, {1, 9, 8, 2}), zero = i64(0), one = i64(1), mv = outOf(), mi = outOf(ScalarType::Long);
  call("aten::topk.values", {&m, &one, &zero, &yes, &yes, &mv, &mi}, &rets);
  CHECK(sizesOf(mv) == Sizes{1, 2});
  CHECK(valuesOf(mv) == Doubles{8, 9});
  CHECK(valuesOf<int64_t>(mi) == Longs{1, 0});
}

TEST_CASE("glu, logit, cumprod, masked_scatter, scatter_reduce, dropout", "[kernels][misc]") {
  Value x = floats({4}, {1, 2, 0, 100}), zero = i64(0), g = outOf();
  callOut("aten::glu.out", {&x, &zero, &g});
  checkClose(valuesOf(g), {0.5, 2});

  Value p = floats({2}, {0.5, 0.25}), none = Value::none(), l = outOf(), le = outOf(), eps = f64(0.3);
  callOut("aten::logit.out", {&p, &none, &l});
  checkClose(valuesOf(l), {0, std::log(1.0 / 3)});
  callOut("aten::logit.out", {&p, &eps, &le});
  checkClose(valuesOf(le), {0, std::log(0.3 / 0.7)});

  Value c = floats({4}, {1, 2, 3, 4}), cp = outOf();
  callOut("aten::cumprod.out", {&c, &zero, &none, &cp});
  CHECK(valuesOf(cp) == Doubles{1, 2, 6, 24});

  Value self = floats({2, 2}, {0, 0, 0, 0}), mask = bools({2, 2}, {1, 0, 0, 1}), src = floats({3}, {10, 20, 30}), ms = outOf();
  callOut("aten::masked_scatter.out", {&self, &mask, &src, &ms});
  CHECK(valuesOf(ms) == Doubles{10, 0, 0, 20});

  Value s = floats({3}, {1, 2, 3}), idx = longs({3}, {0, 0, 2}), vals = floats({3}, {5, 6, 7});
  Value sum = str("sum"), amax = str("amax"), mean = str("mean"), yes = flag(true), no = flag(false);
  Value o1 = outOf(), o2 = outOf(), o3 = outOf();
  callOut("aten::scatter_reduce.two_out", {&s, &zero, &idx, &vals, &sum, &yes, &o1});
  CHECK(valuesOf(o1) == Doubles{12, 2, 10});
  callOut("aten::scatter_reduce.two_out", {&s, &zero, &idx, &vals, &amax, &no, &o2});
  CHECK(valuesOf(o2) == Doubles{6, 2, 7});
  callOut("aten::scatter_reduce.two_out", {&s, &zero, &idx, &vals, &mean, &yes, &o3});
  CHECK(valuesOf(o3) == Doubles{4, 2, 5});

  Value half = f64(0.5), d = outOf(), dm = outOf(ScalarType::Bool), rets = tensorList({&d, &dm});
  call("aten::native_dropout.out", {&c, &half, &no, &d, &dm}, &rets);
  CHECK(valuesOf(d) == Doubles{1, 2, 3, 4});
  CHECK(valuesOf<int>(dm) == std::vector<int>{1, 1, 1, 1});
  Value d2 = outOf(), dm2 = outOf(ScalarType::Bool);
  CHECK_THROWS_WITH(call("aten::native_dropout.out", {&c, &half, &yes, &d2, &dm2}, &rets), Catch::Contains("random"));

  Value a = floats({3}, {1, 2, 3}), t = floats({3}, {1, 0, 5}), none0 = i64(0), mean1 = i64(1), sum2 = i64(2);
  Value l0 = outOf(), l1 = outOf(), l2 = outOf();
  callOut("aten::mse_loss.out", {&a, &t, &none0, &l0});
  callOut("aten::mse_loss.out", {&a, &t, &mean1, &l1});
  callOut("aten::mse_loss.out", {&a, &t, &sum2, &l2});
  CHECK(valuesOf(l0) == Doubles{0, 4, 4});
  CHECK(sizesOf(l1).empty());
  checkClose(valuesOf(l1), {8.0 / 3});
  CHECK(valuesOf(l2) == Doubles{8});
}

TEST_CASE("random kernels repeat after reseeding and have the right ranges", "[kernels][random]") {
  Value size = intList({1000}), a = outOf(), b = outOf(), n = outOf();
  seedRandomKernels(42);
  callOut("aten::rand.out", {&size, &a});
  callOut("aten::randn.out", {&size, &n});
  seedRandomKernels(42);
  callOut("aten::rand.out", {&size, &b});
  CHECK(valuesOf(a) == valuesOf(b));
  std::vector<double> u = valuesOf(a), g = valuesOf(n);
  double mean = 0, gm = 0, gv = 0;
  for (double x : u) {
    CHECK(x >= 0);
    CHECK(x < 1);
    mean += x / 1000;
  }
  for (double x : g) gm += x / 1000;
  for (double x : g) gv += (x - gm) * (x - gm) / 1000;
  CHECK(mean == Approx(0.5).margin(0.05));
  CHECK(gm == Approx(0).margin(0.1));
  CHECK(gv == Approx(1).margin(0.15));
  Value c = outOf();
  callOut("aten::rand.out", {&size, &c}); // without reseeding the stream moves on
  CHECK(valuesOf(c) != valuesOf(a));

  Value ten = Value::of(int64_t(10)), p = outOf(ScalarType::Long);
  callOut("aten::randperm.out", {&ten, &p});
  std::vector<int64_t> perm = valuesOf<int64_t>(p);
  std::sort(perm.begin(), perm.end());
  CHECK(perm == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}
