//===- tests/Run/KernelsElementwiseTest.cpp - Elementwise kernels ---------===//
//
// Expected values are computed by hand (or are exact closed forms); PyTorch's
// promotion results are the ones documented for torch.result_type.
//
//===----------------------------------------------------------------------===//

#include "KernelsTestUtil.h"

#include <cmath>
#include <limits>

using namespace exir;
using namespace exir::run;
using namespace exir::run::test;

namespace {
const double kInf = std::numeric_limits<double>::infinity();
} // namespace

TEST_CASE("add broadcasts and applies alpha", "[kernels][elementwise]") {
  Value a = floats({2, 3}, {1, 2, 3, 4, 5, 6}), b = floats({3}, {10, 20, 30}), alpha = i64(2), out = outOf();
  callOut("aten::add.out", {&a, &b, &alpha, &out});
  CHECK(sizesOf(out) == std::vector<int64_t>{2, 3});
  CHECK(valuesOf(out) == std::vector<double>{21, 42, 63, 24, 45, 66});

  // [2,1] with [1,3] broadcasts both ways.
  Value c = floats({2, 1}, {1, 2}), d = floats({1, 3}, {10, 20, 30}), one = i64(1), out2 = outOf();
  callOut("aten::sub.out", {&c, &d, &one, &out2});
  CHECK(sizesOf(out2) == std::vector<int64_t>{2, 3});
  CHECK(valuesOf(out2) == std::vector<double>{-9, -19, -29, -8, -18, -28});

  Value e = floats({4}, {1, 2, 3, 4}), bad = outOf();
  CHECK_THROWS_WITH(callOut("aten::add.out", {&e, &b, &one, &bad}),
                    Catch::Contains("aten::add.out: shapes [4] and [3] are not broadcastable"));
}

TEST_CASE("type promotion follows torch.result_type", "[kernels][elementwise]") {
  SECTION("int tensor + float scalar computes in float32") {
    Value a = longs({3}, {1, 2, 3}), s = f64(0.5), one = i64(1), out = outOf(ScalarType::Float);
    callOut("aten::add.Scalar_out", {&a, &s, &one, &out});
    CHECK(valuesOf(out) == std::vector<double>{1.5, 2.5, 3.5});
    Value longOut = outOf(ScalarType::Long);
    CHECK_THROWS_WITH(callOut("aten::add.Scalar_out", {&a, &s, &one, &longOut}),
                      Catch::Contains("can't be cast to the out dtype torch.int64"));
  }
  SECTION("int8 + uint8 promotes to int16") {
    Value a = tensorValue<int>(ScalarType::Char, {2}, {-100, 100}),
          b = tensorValue<int>(ScalarType::Byte, {2}, {200, 200}), one = i64(1), out = outOf(ScalarType::Short);
    callOut("aten::add.out", {&a, &b, &one, &out});
    CHECK(valuesOf<int64_t>(out) == std::vector<int64_t>{100, 300});
  }
  SECTION("uint8 arithmetic wraps in the out dtype") {
    Value a = tensorValue<int>(ScalarType::Byte, {2}, {250, 3}), s = i64(10), one = i64(1),
          out = outOf(ScalarType::Byte);
    callOut("aten::add.Scalar_out", {&a, &s, &one, &out});
    CHECK(valuesOf<int64_t>(out) == std::vector<int64_t>{4, 13});
  }
  SECTION("a 0-dim float64 tensor does not promote a float32 tensor") {
    Value a = floats({2}, {1, 2}), b = tensorValue<double>(ScalarType::Double, {}, {0.1}), out = outOf();
    callOut("aten::mul.out", {&a, &b, &out});
    // Computed in float: 0.1 rounds to float first.
    CHECK(valuesOf<float>(out) == std::vector<float>{1.0f * 0.1f, 2.0f * 0.1f});
    CHECK(kern::ResultType().add(a.toTensor()).add(b.toTensor()).get() == ScalarType::Float);
  }
  SECTION("a 0-dim float tensor does promote an int tensor") {
    Value a = longs({2}, {1, 2}), b = tensorValue<double>(ScalarType::Double, {}, {0.5});
    CHECK(kern::ResultType().add(a.toTensor()).add(b.toTensor()).get() == ScalarType::Double);
  }
  SECTION("bool with int scalar is int64; bool with bool stays bool") {
    Value a = bools({2}, {1, 0});
    CHECK(kern::ResultType().add(a.toTensor()).add(kern::Scalar::ofInt(3)).get() == ScalarType::Long);
    CHECK(kern::ResultType().add(a.toTensor()).add(a.toTensor()).get() == ScalarType::Bool);
  }
  SECTION("float alpha with int tensors is refused") {
    Value a = longs({1}, {1}), b = longs({1}, {2}), alpha = f64(0.5), out = outOf(ScalarType::Long);
    CHECK_THROWS_WITH(callOut("aten::add.out", {&a, &b, &alpha, &out}), Catch::Contains("alpha"));
    Value f = floats({1}, {1}), yes = Value::of(true), fout = outOf();
    CHECK_THROWS_WITH(callOut("aten::add.out", {&f, &f, &yes, &fout}), Catch::Contains("boolean alpha"));
    Value t = bools({2}, {1, 0}), two = i64(2), bout = outOf(ScalarType::Bool);
    callOut("aten::add.out", {&t, &t, &two, &bout}); // an int alpha is fine for bool tensors
    CHECK(valuesOf<int>(bout) == std::vector<int>{1, 0});
  }
}

TEST_CASE("rsub, mul and scalar forms", "[kernels][elementwise]") {
  Value x = floats({3}, {1, 2, 3}), five = i64(5), two = i64(2), out = outOf();
  callOut("aten::rsub.Scalar_out", {&x, &five, &two, &out});
  CHECK(valuesOf(out) == std::vector<double>{3, 1, -1});
  Value y = floats({3}, {10, 10, 10}), out2 = outOf();
  callOut("aten::rsub.Tensor_out", {&x, &y, &two, &out2});
  CHECK(valuesOf(out2) == std::vector<double>{8, 6, 4});
  Value half = f64(0.5), out3 = outOf();
  callOut("aten::mul.Scalar_out", {&x, &half, &out3});
  CHECK(valuesOf(out3) == std::vector<double>{0.5, 1, 1.5});
}

TEST_CASE("div rounding modes, floor_divide, remainder, fmod", "[kernels][elementwise]") {
  Value a = floats({4}, {-7, 7, 7.5, 1}), b = floats({4}, {2, -2, 2, 0});
  Value out = outOf();
  callOut("aten::div.out", {&a, &b, &out});
  CHECK(valuesOf(out) == std::vector<double>{-3.5, -3.5, 3.75, kInf});
  Value trunc = str("trunc"), floor = str("floor"), outT = outOf(), outF = outOf();
  callOut("aten::div.out_mode", {&a, &b, &trunc, &outT});
  CHECK(valuesOf(outT) == std::vector<double>{-3, -3, 3, kInf});
  callOut("aten::div.out_mode", {&a, &b, &floor, &outF});
  CHECK(valuesOf(outF) == std::vector<double>{-4, -4, 3, kInf});

  Value ia = longs({3}, {-7, 7, 6}), ib = longs({3}, {2, -2, 3});
  Value trueDiv = outOf(ScalarType::Float);
  callOut("aten::div.out", {&ia, &ib, &trueDiv});
  CHECK(valuesOf(trueDiv) == std::vector<double>{-3.5, -3.5, 2});
  Value floorDiv = outOf(ScalarType::Long);
  callOut("aten::floor_divide.out", {&ia, &ib, &floorDiv});
  CHECK(valuesOf<int64_t>(floorDiv) == std::vector<int64_t>{-4, -4, 2});
  Value truncDiv = outOf(ScalarType::Long);
  callOut("aten::div.out_mode", {&ia, &ib, &trunc, &truncDiv});
  CHECK(valuesOf<int64_t>(truncDiv) == std::vector<int64_t>{-3, -3, 2});
  Value zero = longs({1}, {0}), err = outOf(ScalarType::Long);
  CHECK_THROWS_WITH(callOut("aten::floor_divide.out", {&ia, &zero, &err}), Catch::Contains("division by zero"));

  Value r = floats({4}, {-7, 7, -7, 5.5}), m = floats({4}, {3, -3, -3, 2});
  Value rem = outOf(), fm = outOf();
  callOut("aten::remainder.Tensor_out", {&r, &m, &rem});
  CHECK(valuesOf(rem) == std::vector<double>{2, -2, -1, 1.5});
  callOut("aten::fmod.Tensor_out", {&r, &m, &fm});
  CHECK(valuesOf(fm) == std::vector<double>{-1, 1, -1, 1.5});
  Value ir = longs({2}, {-7, 7}), three = i64(3), irem = outOf(ScalarType::Long);
  callOut("aten::remainder.Scalar_out", {&ir, &three, &irem});
  CHECK(valuesOf<int64_t>(irem) == std::vector<int64_t>{2, 1});
}

TEST_CASE("pow in all three forms", "[kernels][elementwise]") {
  Value a = floats({3}, {2, 3, 4}), e = floats({3}, {3, 2, 0.5}), out = outOf();
  callOut("aten::pow.Tensor_Tensor_out", {&a, &e, &out});
  CHECK(valuesOf(out) == std::vector<double>{8, 9, 2});
  Value two = i64(2), out2 = outOf();
  callOut("aten::pow.Tensor_Scalar_out", {&a, &two, &out2});
  CHECK(valuesOf(out2) == std::vector<double>{4, 9, 16});
  Value base = i64(2), ex = longs({4}, {0, 1, 10, -1}), out3 = outOf(ScalarType::Long);
  callOut("aten::pow.Scalar_out", {&base, &ex, &out3});
  CHECK(valuesOf<int64_t>(out3) == std::vector<int64_t>{1, 2, 1024, 0});
  Value fbase = f64(0.5), out4 = outOf();
  callOut("aten::pow.Scalar_out", {&fbase, &ex, &out4});
  CHECK(valuesOf(out4) == std::vector<double>{1, 0.5, 1.0 / 1024, 2});
}

TEST_CASE("comparisons, logical and bitwise ops", "[kernels][elementwise]") {
  Value a = floats({2, 2}, {1, 2, 3, 4}), b = floats({2}, {2, 2}), out = outOf(ScalarType::Bool);
  callOut("aten::lt.Tensor_out", {&a, &b, &out});
  CHECK(out.toTensor().dtype == ScalarType::Bool);
  CHECK(valuesOf<int>(out) == std::vector<int>{1, 0, 0, 0});
  Value s = f64(2.5), ge = outOf(ScalarType::Bool);
  callOut("aten::ge.Scalar_out", {&a, &s, &ge});
  CHECK(valuesOf<int>(ge) == std::vector<int>{0, 0, 1, 1});
  // An int tensor compared with a float scalar compares in float: 2 == 2.5 is false.
  Value ia = longs({2}, {2, 3}), eq = outOf(ScalarType::Bool);
  callOut("aten::eq.Scalar_out", {&ia, &s, &eq});
  CHECK(valuesOf<int>(eq) == std::vector<int>{0, 0});
  Value nan = floats({2}, {kNaN, 1}), ne = outOf(ScalarType::Bool);
  callOut("aten::ne.Tensor_out", {&nan, &nan, &ne});
  CHECK(valuesOf<int>(ne) == std::vector<int>{1, 0});

  Value p = floats({4}, {0, 0, 2, -1}), q = longs({4}, {0, 5, 0, 1});
  Value land = outOf(ScalarType::Bool), lor = outOf(ScalarType::Bool), lxor = outOf(ScalarType::Bool);
  callOut("aten::logical_and.out", {&p, &q, &land});
  callOut("aten::logical_or.out", {&p, &q, &lor});
  callOut("aten::logical_xor.out", {&p, &q, &lxor});
  CHECK(valuesOf<int>(land) == std::vector<int>{0, 0, 0, 1});
  CHECK(valuesOf<int>(lor) == std::vector<int>{0, 1, 1, 1});
  CHECK(valuesOf<int>(lxor) == std::vector<int>{0, 1, 1, 0});
  Value lnot = outOf(ScalarType::Bool);
  callOut("aten::logical_not.out", {&p, &lnot});
  CHECK(valuesOf<int>(lnot) == std::vector<int>{1, 1, 0, 0});

  Value x = longs({3}, {12, 10, -1}), y = longs({3}, {10, 3, 255});
  Value band = outOf(ScalarType::Long), bor = outOf(ScalarType::Long), bxor = outOf(ScalarType::Long);
  callOut("aten::bitwise_and.Tensor_out", {&x, &y, &band});
  callOut("aten::bitwise_or.Tensor_out", {&x, &y, &bor});
  callOut("aten::bitwise_xor.Tensor_out", {&x, &y, &bxor});
  CHECK(valuesOf<int64_t>(band) == std::vector<int64_t>{8, 2, 255});
  CHECK(valuesOf<int64_t>(bor) == std::vector<int64_t>{14, 11, -1});
  CHECK(valuesOf<int64_t>(bxor) == std::vector<int64_t>{6, 9, -256});
  Value bt = bools({2}, {1, 0}), bnot = outOf(ScalarType::Bool), inot = outOf(ScalarType::Long);
  callOut("aten::bitwise_not.out", {&bt, &bnot});
  CHECK(valuesOf<int>(bnot) == std::vector<int>{0, 1});
  callOut("aten::bitwise_not.out", {&x, &inot});
  CHECK(valuesOf<int64_t>(inot) == std::vector<int64_t>{-13, -11, 0});
  Value f = floats({1}, {1}), fout = outOf();
  CHECK_THROWS_WITH(callOut("aten::bitwise_and.Tensor_out", {&f, &f, &fout}), Catch::Contains("integral"));
}

TEST_CASE("maximum and minimum propagate NaN", "[kernels][elementwise]") {
  Value a = floats({3}, {1, kNaN, 5}), b = floats({3}, {2, 0, kNaN}), mx = outOf(), mn = outOf();
  callOut("aten::maximum.out", {&a, &b, &mx});
  callOut("aten::minimum.out", {&a, &b, &mn});
  checkClose(valuesOf(mx), {2, kNaN, kNaN});
  checkClose(valuesOf(mn), {1, kNaN, kNaN});
}

TEST_CASE("unary math", "[kernels][elementwise]") {
  Value x = floats({4}, {0, 1, -1, 0.5});
  auto run = [&](const char *name, Value &in) {
    Value out = outOf();
    callOut(name, {&in, &out});
    return valuesOf(out);
  };
  checkClose(run("aten::exp.out", x), {1, std::exp(1.0), std::exp(-1.0), std::exp(0.5)});
  checkClose(run("aten::expm1.out", x), {0, std::expm1(1.0), std::expm1(-1.0), std::expm1(0.5)});
  checkClose(run("aten::sigmoid.out", x), {0.5, 1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(1.0)), 1 / (1 + std::exp(-0.5))});
  checkClose(run("aten::tanh.out", x), {0, std::tanh(1.0), -std::tanh(1.0), std::tanh(0.5)});
  checkClose(run("aten::erf.out", x), {0, 0.8427007929497149, -0.8427007929497149, 0.5204998778130465});
  checkClose(run("aten::neg.out", x), {0, -1, 1, -0.5});
  checkClose(run("aten::abs.out", x), {0, 1, 1, 0.5});
  checkClose(run("aten::sign.out", x), {0, 1, -1, 1});
  Value pos = floats({3}, {4, 0.25, 0});
  checkClose(run("aten::sqrt.out", pos), {2, 0.5, 0});
  checkClose(run("aten::rsqrt.out", pos), {0.5, 2, kInf});
  checkClose(run("aten::reciprocal.out", pos), {0.25, 4, kInf});
  checkClose(run("aten::log.out", pos), {std::log(4.0), std::log(0.25), -kInf});
  checkClose(run("aten::log1p.out", pos), {std::log1p(4.0), std::log1p(0.25), 0});

  Value r = floats({7}, {0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6});
  checkClose(run("aten::round.out", r), {0, 2, 2, -0.0, -2, 2, -3});
  checkClose(run("aten::floor.out", r), {0, 1, 2, -1, -2, 2, -3});
  checkClose(run("aten::ceil.out", r), {1, 2, 3, -0.0, -1, 3, -2});
  checkClose(run("aten::trunc.out", r), {0, 1, 2, -0.0, -1, 2, -2});

  // Integral inputs of float functions promote to float32.
  Value ints = longs({2}, {0, 2}), expOut = outOf(ScalarType::Float);
  callOut("aten::exp.out", {&ints, &expOut});
  checkClose(valuesOf(expOut), {1, std::exp(2.0)});
  Value intOut = outOf(ScalarType::Long);
  CHECK_THROWS_WITH(callOut("aten::exp.out", {&ints, &intOut}), Catch::Contains("aten::exp.out: result type"));
  Value b = bools({1}, {1}), negOut = outOf(ScalarType::Bool);
  CHECK_THROWS(callOut("aten::neg.out", {&b, &negOut}));

  Value special = floats({4}, {kNaN, kInf, -kInf, 1}), isnan = outOf(ScalarType::Bool), isinf = outOf(ScalarType::Bool);
  callOut("aten::isnan.out", {&special, &isnan});
  callOut("aten::isinf.out", {&special, &isinf});
  CHECK(valuesOf<int>(isnan) == std::vector<int>{1, 0, 0, 0});
  CHECK(valuesOf<int>(isinf) == std::vector<int>{0, 1, 1, 0});
}

TEST_CASE("activations", "[kernels][elementwise]") {
  Value x = floats({5}, {-3, -1, 0, 1, 3});
  Value relu = outOf();
  callOut("aten::relu.out", {&x, &relu});
  CHECK(valuesOf(relu) == std::vector<double>{0, 0, 0, 1, 3});
  Value withNaN = floats({2}, {kNaN, -kInf}), reluNaN = outOf(), signNaN = outOf();
  callOut("aten::relu.out", {&withNaN, &reluNaN});
  checkClose(valuesOf(reluNaN), {kNaN, 0});
  callOut("aten::sign.out", {&withNaN, &signNaN});
  CHECK(valuesOf(signNaN) == std::vector<double>{0, -1});

  Value lo = f64(-2.0), hi = f64(2.0), ht = outOf();
  callOut("aten::hardtanh.out", {&x, &lo, &hi, &ht});
  CHECK(valuesOf(ht) == std::vector<double>{-2, -1, 0, 1, 2});

  Value slope = f64(0.1), lr = outOf();
  callOut("aten::leaky_relu.out", {&x, &slope, &lr});
  checkClose(valuesOf(lr), {-0.3, -0.1, 0, 1, 3});

  Value one = i64(1), elu = outOf();
  callOut("aten::elu.out", {&x, &one, &one, &one, &elu});
  checkClose(valuesOf(elu), {std::exp(-3.0) - 1, std::exp(-1.0) - 1, 0, 1, 3});

  Value none = str("none"), tanh = str("tanh"), g1 = outOf(), g2 = outOf();
  callOut("aten::gelu.out", {&x, &none, &g1});
  callOut("aten::gelu.out", {&x, &tanh, &g2});
  // 0.5 x (1 + erf(x / sqrt 2)); tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  checkClose(valuesOf(g1), {-0.004049694, -0.158655254, 0, 0.841344746, 2.995950306}, 1e-6);
  checkClose(valuesOf(g2), {-0.003637392, -0.158808009, 0, 0.841191991, 2.996362608}, 1e-6);
  Value bad = str("fast"), g3 = outOf();
  CHECK_THROWS_WITH(callOut("aten::gelu.out", {&x, &bad, &g3}), Catch::Contains("approximate"));

  Value hs = outOf(), hsig = outOf();
  callOut("aten::hardswish.out", {&x, &hs});
  callOut("aten::hardsigmoid.out", {&x, &hsig});
  checkClose(valuesOf(hs), {0, -1.0 / 3, 0, 4.0 / 6, 3});
  checkClose(valuesOf(hsig), {0, 1.0 / 3, 0.5, 4.0 / 6, 1});

  Value beta = i64(1), threshold = i64(2), sp = outOf();
  callOut("aten::softplus.out", {&x, &beta, &threshold, &sp});
  // Above the threshold softplus is the identity.
  checkClose(valuesOf(sp), {std::log1p(std::exp(-3.0)), std::log1p(std::exp(-1.0)), std::log(2.0),
                            std::log1p(std::exp(1.0)), 3});
}

TEST_CASE("clamp, where, masked_fill", "[kernels][elementwise]") {
  Value x = floats({4}, {-2, 0.5, 3, kNaN});
  Value lo = f64(0.0), hi = i64(1), noneV = Value::none(), out = outOf(), outLo = outOf();
  callOut("aten::clamp.out", {&x, &lo, &hi, &out});
  checkClose(valuesOf(out), {0, 0.5, 1, kNaN});
  callOut("aten::clamp.out", {&x, &lo, &noneV, &outLo});
  checkClose(valuesOf(outLo), {0, 0.5, 3, kNaN});
  Value outErr = outOf();
  CHECK_THROWS_WITH(callOut("aten::clamp.out", {&x, &noneV, &noneV, &outErr}), Catch::Contains("must not be None"));
  // An int tensor clamped by a float bound computes (and returns) float.
  Value ints = longs({3}, {-1, 0, 2}), fhi = f64(0.5), fout = outOf(ScalarType::Float);
  callOut("aten::clamp.out", {&ints, &noneV, &fhi, &fout});
  CHECK(valuesOf(fout) == std::vector<double>{-1, 0, 0.5});

  Value m = floats({2, 2}, {1, 2, 3, 4}), tlo = floats({2}, {2, 0}), thi = floats({2, 1}, {10, 3}), tout = outOf();
  callOut("aten::clamp.Tensor_out", {&m, &tlo, &thi, &tout});
  CHECK(valuesOf(tout) == std::vector<double>{2, 2, 3, 3});

  Value cond = bools({2, 1}, {1, 0}), a = floats({2}, {1, 2}), b = longs({1}, {7}), wout = outOf();
  callOut("aten::where.self_out", {&cond, &a, &b, &wout});
  CHECK(sizesOf(wout) == std::vector<int64_t>{2, 2});
  CHECK(valuesOf(wout) == std::vector<double>{1, 2, 7, 7});
  Value notBool = floats({1}, {1}), werr = outOf();
  CHECK_THROWS_WITH(callOut("aten::where.self_out", {&notBool, &a, &b, &werr}), Catch::Contains("bool"));

  Value mask = bools({2}, {0, 1}), fill = f64(-1.5), mf = outOf();
  callOut("aten::masked_fill.Scalar_out", {&m, &mask, &fill, &mf});
  CHECK(valuesOf(mf) == std::vector<double>{1, -1.5, 3, -1.5});
  Value fillT = tensorValue<double>(ScalarType::Float, {}, {9}), mft = outOf();
  callOut("aten::masked_fill.Tensor_out", {&m, &mask, &fillT, &mft});
  CHECK(valuesOf(mft) == std::vector<double>{1, 9, 3, 9});
}

TEST_CASE("elementwise kernels honour dim orders and planned capacity", "[kernels][elementwise]") {
  // A [1,2,2,2] NCHW tensor stored channels-last: memory order is (h, w, c).
  auto channelsLast = [](std::vector<double> logical) {
    Tensor t = Tensor::make(ScalarType::Float, {1, 2, 2, 2});
    t.dimOrder = {0, 2, 3, 1};
    std::vector<int64_t> s = t.strides();
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t w = 0; w < 2; ++w) t.ptr<float>()[c * s[1] + h * s[2] + w * s[3]] = float(logical[c * 4 + h * 2 + w]);
    return Value::of(std::move(t));
  };
  Value a = channelsLast({1, 2, 3, 4, 5, 6, 7, 8}), b = channelsLast({10, 20, 30, 40, 50, 60, 70, 80});
  Tensor outT = Tensor::make(ScalarType::Float, {1, 2, 2, 2});
  outT.dimOrder = {0, 2, 3, 1};
  Value out = Value::of(outT), one = i64(1);
  callOut("aten::add.out", {&a, &b, &one, &out});
  CHECK(out.toTensor().dimOrder == std::vector<uint8_t>{0, 2, 3, 1});
  CHECK(valuesOf(out) == std::vector<double>{11, 22, 33, 44, 55, 66, 77, 88});
  // Memory order of the result is channels-last: (h0 w0 c0), (h0 w0 c1), ...
  CHECK(out.toTensor().ptr<float>()[1] == 55);

  Value contiguousOut = Value::of(Tensor::make(ScalarType::Float, {1, 2, 2, 2}));
  CHECK_THROWS_WITH(callOut("aten::add.out", {&a, &b, &one, &contiguousOut}),
                    Catch::Contains("aten::add.out: input and output dim orders differ"));

  // A planned (non-growable) out of 2 floats cannot take 3.
  std::vector<float> arena(2);
  Tensor planned;
  planned.sizes = {2};
  planned.dimOrder = {0};
  planned.data = reinterpret_cast<uint8_t *>(arena.data());
  planned.capacity = sizeof(float) * 2;
  Value p = Value::of(planned), x = floats({3}, {1, 2, 3});
  CHECK_THROWS_WITH(callOut("aten::relu.out", {&x, &p}), Catch::Contains("planned capacity is 8"));
  Value y = floats({2}, {-1, 5});
  callOut("aten::relu.out", {&y, &p});
  CHECK(arena == std::vector<float>{0, 5});
}

TEST_CASE("float16 and bfloat16 compute in float and round once", "[kernels][elementwise]") {
  CHECK(kern::floatToHalfBits(1.0f) == 0x3c00);
  CHECK(kern::floatToHalfBits(65504.0f) == 0x7bff);
  CHECK(kern::floatToHalfBits(70000.0f) == 0x7c00);   // overflow to infinity
  CHECK(kern::floatToHalfBits(0x1p-24f) == 0x0001);   // smallest subnormal
  CHECK(kern::floatToHalfBits(0x1p-25f) == 0x0000);   // the tie rounds to even (zero)
  CHECK(kern::floatToHalfBits(1.0f + 0x1p-11f) == 0x3c00); // tie: even mantissa stays
  CHECK(kern::floatToHalfBits(1.0f + 0x3p-11f) == 0x3c02); // tie: odd mantissa rounds up
  CHECK(kern::halfBitsToFloat(0x0001) == 0x1p-24f);
  CHECK(kern::halfBitsToFloat(0xc000) == -2.0f);
  CHECK(std::isinf(kern::halfBitsToFloat(0x7c00)));
  CHECK(kern::floatToBFloat16Bits(1.0f) == 0x3f80);
  CHECK(kern::bfloat16BitsToFloat(kern::floatToBFloat16Bits(1.0f / 3)) == 0.333984375f);

  Value x = floats({2}, {1.0 / 3, 2}), nb = Value::of(false), none = Value::none(), h = outOf(ScalarType::Half);
  callOut("dim_order_ops::_to_dim_order_copy.out", {&x, &nb, &none, &h});
  CHECK(valuesOf(h) == std::vector<double>{0.333251953125, 2});
  Value one = Value::of(int64_t(1)), sum = outOf(ScalarType::Half);
  callOut("aten::add.out", {&h, &h, &one, &sum});
  CHECK(valuesOf(sum) == std::vector<double>{0.66650390625, 4});
  Value b = outOf(ScalarType::BFloat16), e = outOf(ScalarType::BFloat16);
  callOut("dim_order_ops::_to_dim_order_copy.out", {&x, &nb, &none, &b});
  callOut("aten::exp.out", {&b, &e});
  CHECK(valuesOf(e)[1] == double(kern::bfloat16BitsToFloat(kern::floatToBFloat16Bits(std::exp(2.0f)))));
  // Half with bfloat16 promotes to float32.
  CHECK(kern::promoteTypes(ScalarType::Half, ScalarType::BFloat16) == ScalarType::Float);
}
