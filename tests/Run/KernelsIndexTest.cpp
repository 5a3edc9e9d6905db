//===- tests/Run/KernelsIndexTest.cpp - indexing, creation, dim order, quant -===//

#include "KernelsTestUtil.h"

using namespace exir;
using namespace exir::run;
using namespace exir::run::test;

namespace {
Value dtype(ScalarType t) { return Value::of(int64_t(t)); }
} // namespace

TEST_CASE("index with None entries, broadcasting and bool masks", "[kernels][index]") {
  Value x = iota({3, 4});
  Value cols = longs({2}, {2, 0}), idx = optionalTensors({nullptr, &cols}), out = outOf();
  callOut("aten::index.Tensor_out", {&x, &idx, &out});
  CHECK(sizesOf(out) == Sizes{3, 2});
  CHECK(valuesOf(out) == Doubles{2, 0, 6, 4, 10, 8});

  Value rows = longs({2, 1}, {0, -1}), cols2 = longs({2}, {1, 3}), idx2 = optionalTensors({&rows, &cols2}), out2 = outOf();
  callOut("aten::index.Tensor_out", {&x, &idx2, &out2});
  CHECK(sizesOf(out2) == Sizes{2, 2});
  CHECK(valuesOf(out2) == Doubles{1, 3, 9, 11});

  Value mask = bools({3}, {1, 0, 1}), idx3 = optionalTensors({&mask}), out3 = outOf();
  callOut("aten::index.Tensor_out", {&x, &idx3, &out3});
  CHECK(sizesOf(out3) == Sizes{2, 4});
  CHECK(valuesOf(out3) == Doubles{0, 1, 2, 3, 8, 9, 10, 11});
  Value fullMask = bools({3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}), idx4 = optionalTensors({&fullMask}), out4 = outOf();
  callOut("aten::index.Tensor_out", {&x, &idx4, &out4});
  CHECK(sizesOf(out4) == Sizes{2});
  CHECK(valuesOf(out4) == Doubles{10, 11});

  // Indexed dims separated by a slice: the broadcast dim goes first.
  Value y = iota({2, 3, 4}), a = longs({2}, {1, 0}), c = longs({2}, {3, 1});
  Value idx5 = optionalTensors({&a, nullptr, &c}), out5 = outOf();
  callOut("aten::index.Tensor_out", {&y, &idx5, &out5});
  CHECK(sizesOf(out5) == Sizes{2, 3});
  CHECK(valuesOf(out5) == Doubles{15, 19, 23, 1, 5, 9});
  Value mid = longs({2}, {2, 0}), idx6 = optionalTensors({nullptr, &mid}), out6 = outOf();
  callOut("aten::index.Tensor_out", {&y, &idx6, &out6});
  CHECK(sizesOf(out6) == Sizes{2, 2, 4});
  CHECK(valuesOf(out6)[4] == 0); // y[0][0][0]

  Value bad = longs({1}, {3}), idx7 = optionalTensors({&bad}), out7 = outOf();
  CHECK_THROWS_WITH(callOut("aten::index.Tensor_out", {&x, &idx7, &out7}),
                    Catch::Contains("aten::index.Tensor_out: index 3 is out of bounds for a dimension of size 3"));
}

TEST_CASE("index_put, index_select, gather, scatter, embedding, nonzero", "[kernels][index]") {
  Value z = floats({3}, {0, 0, 0}), pos = longs({3}, {0, 2, 0}), idx = optionalTensors({&pos}),
        values = floats({3}, {1, 2, 3}), yes = flag(true), no = flag(false), acc = outOf();
  callOut("aten::index_put.out", {&z, &idx, &values, &yes, &acc});
  CHECK(valuesOf(acc) == Doubles{4, 0, 2});
  Value mask = bools({3}, {1, 0, 1}), midx = optionalTensors({&mask}), seven = floats({1}, {7}), put = outOf();
  callOut("aten::index_put.out", {&z, &midx, &seven, &no, &put});
  CHECK(valuesOf(put) == Doubles{7, 0, 7});
  CHECK(valuesOf(z) == Doubles{0, 0, 0}); // self is not modified

  Value x = iota({3, 4}), one = i64(1), sel = longs({2}, {3, 0}), is = outOf();
  callOut("aten::index_select.out", {&x, &one, &sel, &is});
  CHECK(valuesOf(is) == Doubles{3, 0, 7, 4, 11, 8});

  Value g = floats({2, 2}, {1, 2, 3, 4}), gi = longs({2, 2}, {0, 0, 1, 0}), sparse = flag(false), go = outOf();
  callOut("aten::gather.out", {&g, &one, &gi, &sparse, &go});
  CHECK(valuesOf(go) == Doubles{1, 1, 4, 3});

  Value zeros = floats({2, 3}, Doubles(6, 0)), si = longs({1, 2}, {0, 2}), src = floats({1, 3}, {5, 6, 7});
  Value so = outOf(), vo = outOf(), ao = outOf(), nine = i64(9);
  callOut("aten::scatter.src_out", {&zeros, &one, &si, &src, &so});
  CHECK(valuesOf(so) == Doubles{5, 0, 6, 0, 0, 0});
  callOut("aten::scatter.value_out", {&zeros, &one, &si, &nine, &vo});
  CHECK(valuesOf(vo) == Doubles{9, 0, 9, 0, 0, 0});
  Value same = longs({1, 2}, {0, 0});
  callOut("aten::scatter_add.out", {&zeros, &one, &same, &src, &ao});
  CHECK(valuesOf(ao) == Doubles{11, 0, 0, 0, 0, 0});

  Value w = floats({3, 2}, {0, 1, 10, 11, 20, 21}), ids = longs({1, 2}, {2, 0}), pad = i64(-1), e = outOf();
  callOut("aten::embedding.out", {&w, &ids, &pad, &no, &no, &e});
  CHECK(sizesOf(e) == Sizes{1, 2, 2});
  CHECK(valuesOf(e) == Doubles{20, 21, 0, 1});

  Value nz = floats({2, 2}, {0, 1, 2, 0}), nzo = outOf(ScalarType::Long);
  callOut("aten::nonzero.out", {&nz, &nzo});
  CHECK(sizesOf(nzo) == Sizes{2, 2});
  CHECK(valuesOf<int64_t>(nzo) == Longs{0, 1, 1, 0});
}

TEST_CASE("creation ops", "[kernels][creation]") {
  Value zero = i64(0), oneF = f64(1.0), quarter = f64(0.25), a = outOf();
  callOut("aten::arange.start_out", {&zero, &oneF, &quarter, &a});
  CHECK(valuesOf(a) == Doubles{0, 0.25, 0.5, 0.75});
  Value five = i64(5), b = outOf(ScalarType::Long);
  callOut("aten::arange.out", {&five, &b});
  CHECK(valuesOf<int64_t>(b) == Longs{0, 1, 2, 3, 4});
  Value minus2 = i64(-2), c = outOf(ScalarType::Long);
  callOut("aten::arange.start_out", {&five, &zero, &minus2, &c});
  CHECK(valuesOf<int64_t>(c) == Longs{5, 3, 1});
  Value st = f64(1), en = f64(2.5), half = f64(0.5), d = outOf();
  callOut("aten::arange.start_out", {&st, &en, &half, &d});
  CHECK(valuesOf(d) == Doubles{1, 1.5, 2});
  Value one = i64(1), bad = outOf();
  CHECK_THROWS_WITH(callOut("aten::arange.start_out", {&five, &zero, &one, &bad}), Catch::Contains("inconsistent"));

  Value size = intList({2, 2}), value = f64(1.5), f = outOf();
  callOut("aten::full.out", {&size, &value, &f});
  CHECK(valuesOf(f) == Doubles{1.5, 1.5, 1.5, 1.5});
  Value trunc = f64(2.7), fl = outOf(ScalarType::Long), s1 = intList({2});
  callOut("aten::full.out", {&s1, &trunc, &fl});
  CHECK(valuesOf<int64_t>(fl) == Longs{2, 2});
  Value ones = outOf(), none = Value::none(), zl = outOf(ScalarType::Long);
  callOut("aten::ones.out", {&s1, &ones});
  CHECK(valuesOf(ones) == Doubles{1, 1});
  callOut("aten::zeros_like.out", {&f, &none, &zl});
  CHECK(sizesOf(zl) == Sizes{2, 2});
  CHECK(valuesOf<int64_t>(zl) == Longs{0, 0, 0, 0});
  Value st2 = f64(3.5), sc = outOf();
  callOut("aten::scalar_tensor.out", {&st2, &sc});
  CHECK(sizesOf(sc).empty());
  CHECK(valuesOf(sc) == Doubles{3.5});
  Value fillV = tensorValue<double>(ScalarType::Float, {}, {-1}), ft = outOf();
  callOut("aten::fill.Tensor_out", {&f, &fillV, &ft});
  CHECK(valuesOf(ft) == Doubles{-1, -1, -1, -1});

  Value src = floats({2}, {1.7, -1.7}), nb = flag(false), tc = outOf(ScalarType::Long);
  callOut("aten::_to_copy.out", {&src, &nb, &none, &tc});
  CHECK(valuesOf<int64_t>(tc) == Longs{1, -1});
}

TEST_CASE("dim order ops convert layout and dtype", "[kernels][dimorder]") {
  Value x = iota({1, 2, 2, 2}), nb = flag(false), cl = intList({0, 2, 3, 1}), out = outOf(ScalarType::Double);
  callOut("dim_order_ops::_to_dim_order_copy.out", {&x, &nb, &cl, &out});
  CHECK(out.toTensor().dtype == ScalarType::Double);
  CHECK(out.toTensor().dimOrder == std::vector<uint8_t>{0, 2, 3, 1});
  CHECK(valuesOf(out) == Doubles{0, 1, 2, 3, 4, 5, 6, 7}); // logical order unchanged
  CHECK(out.toTensor().ptr<double>()[1] == 4);              // memory order (h, w, c)
  Value none = Value::none(), back = outOf();
  Value contiguous = intList({0, 1, 2, 3});
  callOut("dim_order_ops::_to_dim_order_copy.out", {&out, &nb, &contiguous, &back});
  CHECK(back.toTensor().isContiguous());
  CHECK(std::vector<float>(back.toTensor().ptr<float>(), back.toTensor().ptr<float>() + 8) ==
        std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});
  Value clone = outOf(ScalarType::Double);
  callOut("dim_order_ops::_clone_dim_order.out", {&out, &nb, &none, &clone});
  CHECK(clone.toTensor().dimOrder == std::vector<uint8_t>{0, 2, 3, 1});
  Value wrongDtype = outOf();
  CHECK_THROWS_WITH(callOut("dim_order_ops::_clone_dim_order.out", {&out, &nb, &none, &wrongDtype}), Catch::Contains("same dtype"));
  Value size = intList({2, 3}), order = intList({1, 0}), empty = outOf();
  callOut("dim_order_ops::_empty_dim_order.out", {&size, &order, &empty});
  CHECK(sizesOf(empty) == Sizes{2, 3});
  CHECK(empty.toTensor().dimOrder == std::vector<uint8_t>{1, 0});
  Value badOrder = intList({0, 0, 1, 2}), bad = outOf();
  CHECK_THROWS_WITH(callOut("dim_order_ops::_to_dim_order_copy.out", {&x, &nb, &badOrder, &bad}), Catch::Contains("not a permutation"));
}

TEST_CASE("quantize rounds half to even and clamps, dequantize inverts", "[kernels][quant]") {
  Value x = floats({7}, {-1, 0, 0.25, 0.75, 1.25, 200, -100}), scale = f64(0.5), zp = i64(1), qmin = i64(0), qmax = i64(255);
  Value u8 = dtype(ScalarType::Byte), q = outOf(ScalarType::Byte);
  callOut("quantized_decomposed::quantize_per_tensor.out", {&x, &scale, &zp, &qmin, &qmax, &u8, &q});
  // x / 0.5 = -2, 0, 0.5, 1.5, 2.5, 400, -200 -> round half even -> + 1 -> clamp to [0, 255]
  CHECK(valuesOf<int64_t>(q) == Longs{0, 1, 1, 3, 3, 255, 0});
  Value wrongOut = outOf(ScalarType::Char);
  CHECK_THROWS_WITH(callOut("quantized_decomposed::quantize_per_tensor.out", {&x, &scale, &zp, &qmin, &qmax, &u8, &wrongOut}),
                    Catch::Contains("out must be torch.uint8"));

  Value none = Value::none(), dq = outOf();
  callOut("quantized_decomposed::dequantize_per_tensor.out", {&q, &scale, &zp, &qmin, &qmax, &u8, &none, &dq});
  CHECK(valuesOf(dq) == Doubles{-0.5, 0, 0, 1, 1, 127, -0.5});

  Value scaleT = tensorValue<double>(ScalarType::Double, {1}, {0.5}), zpT = longs({1}, {1}), q2 = outOf(ScalarType::Byte);
  callOut("quantized_decomposed::quantize_per_tensor.Tensor_out", {&x, &scaleT, &zpT, &qmin, &qmax, &u8, &q2});
  CHECK(valuesOf<int64_t>(q2) == valuesOf<int64_t>(q));
  Value dq2 = outOf();
  callOut("quantized_decomposed::dequantize_per_tensor.Tensor_out", {&q2, &scaleT, &zpT, &qmin, &qmax, &u8, &none, &dq2});
  CHECK(valuesOf(dq2) == valuesOf(dq));

  Value w = floats({2, 2}, {1, 2, 1, 2}), scales = tensorValue<double>(ScalarType::Double, {2}, {0.5, 1.0}),
        zps = longs({2}, {0, 1}), axis = i64(0), lo = i64(-128), hi = i64(127), i8 = dtype(ScalarType::Char),
        qc = outOf(ScalarType::Char);
  callOut("quantized_decomposed::quantize_per_channel.out", {&w, &scales, &zps, &axis, &lo, &hi, &i8, &qc});
  CHECK(valuesOf<int64_t>(qc) == Longs{2, 4, 2, 3});
  Value dqc = outOf();
  callOut("quantized_decomposed::dequantize_per_channel.out", {&qc, &scales, &zps, &axis, &lo, &hi, &i8, &none, &dqc});
  CHECK(valuesOf(dqc) == Doubles{1, 2, 1, 2});

  Value r = floats({2}, {-1, 3}), eps = f64(1e-5), sOut = outOf(ScalarType::Double), zOut = outOf(ScalarType::Long);
  Value rets = tensorList({&sOut, &zOut});
  call("quantized_decomposed::choose_qparams.Tensor_out", {&r, &qmin, &qmax, &eps, &u8, &sOut, &zOut}, &rets);
  CHECK(valuesOf(sOut)[0] == Approx(4.0 / 255));
  CHECK(valuesOf<int64_t>(zOut) == Longs{64}); // 0 - round(-1 / (4 / 255)) = round(63.75)
}
