//===- tests/Run/KernelsConvPoolTest.cpp - convolution, pooling, upsample -===//
//
// Expected values worked out by hand; the comments give the taps.
//
//===----------------------------------------------------------------------===//

#include "KernelsTestUtil.h"

using namespace exir;
using namespace exir::run;
using namespace exir::run::test;

namespace {
Value doubles(std::vector<double> v) { Value x; x.v = std::move(v); return x; }
} // namespace

TEST_CASE("conv2d with groups, stride, padding and dilation", "[kernels][conv]") {
  // x[c][r][col] = 16 c + 4 r + col; depthwise (groups 2), stride 2, padding 1, dilation 2.
  Value x = iota({1, 2, 4, 4}), w = floats({2, 1, 2, 2}, {1, 0, 0, 1, 1, 1, 1, 1}), b = floats({2}, {10, 100});
  Value stride = intList({2, 2}), pad = intList({1, 1}), dil = intList({2, 2}), transposed = flag(false),
        outPad = intList({0, 0}), groups = i64(2), out = outOf();
  callOut("aten::convolution.out", {&x, &w, &b, &stride, &pad, &dil, &transposed, &outPad, &groups, &out});
  CHECK(sizesOf(out) == Sizes{1, 2, 2, 2});
  // Channel 0 taps (r, c) and (r + 2, c + 2) from (2i - 1, 2j - 1): 0 + 5, 0 + 7, 0 + 13, 5 + 15.
  // Channel 1 sums the four taps inside the input: 21, 21 + 23, 21 + 29, 21 + 23 + 29 + 31.
  CHECK(valuesOf(out) == Doubles{15, 17, 23, 30, 121, 144, 150, 204});

  Value threeGroups = i64(3), bad = outOf();
  CHECK_THROWS_WITH(callOut("aten::convolution.out", {&x, &w, &b, &stride, &pad, &dil, &transposed, &outPad, &threeGroups, &bad}),
                    Catch::Contains("aten::convolution.out: input channels 2 are not divisible by groups 3"));
}

TEST_CASE("conv1d mixes channels, conv3d, channels-last input", "[kernels][conv]") {
  Value x = floats({1, 2, 3}, {1, 2, 3, 4, 5, 6}), w = floats({1, 2, 2}, {1, -1, 2, 0}), none = Value::none();
  Value one = intList({1}), zero = intList({0}), transposed = flag(false), groups = i64(1), out = outOf();
  callOut("aten::convolution.out", {&x, &w, &none, &one, &zero, &one, &transposed, &zero, &groups, &out});
  CHECK(sizesOf(out) == Sizes{1, 1, 2});
  CHECK(valuesOf(out) == Doubles{1 - 2 + 8, 2 - 3 + 10});

  Value x3 = floats({1, 1, 2, 2, 2}, Doubles(8, 1)), w3 = floats({1, 1, 2, 2, 2}, Doubles(8, 0.5));
  Value ones3 = intList({1, 1, 1}), zeros3 = intList({0, 0, 0}), out3 = outOf();
  callOut("aten::convolution.out", {&x3, &w3, &none, &ones3, &zeros3, &ones3, &transposed, &zeros3, &groups, &out3});
  CHECK(sizesOf(out3) == Sizes{1, 1, 1, 1, 1});
  CHECK(valuesOf(out3) == Doubles{4});

  // The same 1x1 conv on a channels-last input writes a channels-last output.
  Tensor cl = Tensor::make(ScalarType::Float, {1, 2, 1, 2});
  cl.dimOrder = {0, 2, 3, 1};
  float *d = cl.ptr<float>(); // memory order (h, w, c): c0 = [1, 2], c1 = [10, 20]
  d[0] = 1, d[1] = 10, d[2] = 2, d[3] = 20;
  Tensor clOut = Tensor::make(ScalarType::Float, {1, 1, 1, 2});
  clOut.dimOrder = {0, 2, 3, 1};
  Value xcl = Value::of(cl), w1 = floats({1, 2, 1, 1}, {1, 1}), o2 = intList({1, 1}), z2 = intList({0, 0}), ocl = Value::of(clOut);
  callOut("aten::convolution.out", {&xcl, &w1, &none, &o2, &z2, &o2, &transposed, &z2, &groups, &ocl});
  CHECK(valuesOf(ocl) == Doubles{11, 22});
}

TEST_CASE("transposed convolution with output_padding", "[kernels][conv]") {
  Value x = floats({1, 1, 2}, {1, 2}), w = floats({1, 1, 3}, {1, 1, 1}), none = Value::none();
  Value two = intList({2}), zero = intList({0}), one = intList({1}), transposed = flag(true), groups = i64(1);
  Value out = outOf();
  callOut("aten::convolution.out", {&x, &w, &none, &two, &zero, &one, &transposed, &one, &groups, &out});
  // Input i scatters to 2i .. 2i + 2; output_padding adds one trailing zero.
  CHECK(valuesOf(out) == Doubles{1, 1, 3, 2, 2, 0});
  Value out2 = outOf();
  callOut("aten::convolution.out", {&x, &w, &none, &two, &one, &one, &transposed, &one, &groups, &out2});
  CHECK(valuesOf(out2) == Doubles{1, 3, 2, 2});
  // Grouped transposed: weight [Cin, Cout / groups, k].
  Value xg = floats({1, 2, 1}, {1, 10}), wg = floats({2, 1, 2}, {1, 2, 3, 4}), g2 = i64(2), outg = outOf(), s1 = intList({1});
  callOut("aten::convolution.out", {&xg, &wg, &none, &s1, &zero, &s1, &transposed, &zero, &g2, &outg});
  CHECK(sizesOf(outg) == Sizes{1, 2, 2});
  CHECK(valuesOf(outg) == Doubles{1, 2, 30, 40});
}

TEST_CASE("max_pool2d_with_indices: ceil_mode, padding, dilation, NaN", "[kernels][pool]") {
  Value x = iota({1, 1, 3, 3}), k2 = intList({2, 2}), s2 = intList({2, 2}), p0 = intList({0, 0}), d1 = intList({1, 1});
  Value floorMode = flag(false), ceilMode = flag(true);
  Value out = outOf(), idx = outOf(ScalarType::Long), rets = tensorList({&out, &idx});
  call("aten::max_pool2d_with_indices.out", {&x, &k2, &s2, &p0, &d1, &floorMode, &out, &idx}, &rets);
  CHECK(sizesOf(out) == Sizes{1, 1, 1, 1});
  CHECK(valuesOf(out) == Doubles{4});
  Value out2 = outOf(), idx2 = outOf(ScalarType::Long);
  call("aten::max_pool2d_with_indices.out", {&x, &k2, &s2, &p0, &d1, &ceilMode, &out2, &idx2}, &rets);
  CHECK(sizesOf(out2) == Sizes{1, 1, 2, 2}); // ceil_mode keeps the partial windows
  CHECK(valuesOf(out2) == Doubles{4, 5, 7, 8});
  CHECK(valuesOf<int64_t>(idx2) == std::vector<int64_t>{4, 5, 7, 8});
  // With padding 1 a third window would start inside the padding: ceil_mode drops it.
  Value p1 = intList({1, 1}), out3 = outOf(), idx3 = outOf(ScalarType::Long);
  call("aten::max_pool2d_with_indices.out", {&x, &k2, &s2, &p1, &d1, &ceilMode, &out3, &idx3}, &rets);
  CHECK(sizesOf(out3) == Sizes{1, 1, 2, 2});
  CHECK(valuesOf(out3) == Doubles{0, 2, 6, 8});
  // Dilation 2 skips the centre (100).
  Value y = floats({1, 3, 3}, {0, 1, 2, 3, 100, 5, 6, 7, 8}), s1 = intList({1, 1}), d2 = intList({2, 2});
  Value out4 = outOf(), idx4 = outOf(ScalarType::Long);
  call("aten::max_pool2d_with_indices.out", {&y, &k2, &s1, &p0, &d2, &floorMode, &out4, &idx4}, &rets);
  CHECK(sizesOf(out4) == Sizes{1, 1, 1});
  CHECK(valuesOf(out4) == Doubles{8});
  CHECK(valuesOf<int64_t>(idx4) == std::vector<int64_t>{8});
  Value n = floats({1, 1, 2}, {1, std::nan("")}), k12 = intList({1, 2}), out5 = outOf(), idx5 = outOf(ScalarType::Long);
  call("aten::max_pool2d_with_indices.out", {&n, &k12, &k12, &p0, &d1, &floorMode, &out5, &idx5}, &rets);
  CHECK(std::isnan(valuesOf(out5)[0]));
  CHECK(valuesOf<int64_t>(idx5) == std::vector<int64_t>{1});
}

TEST_CASE("avg_pool2d: count_include_pad, divisor_override, ceil_mode", "[kernels][pool]") {
  Value x = iota({1, 1, 3, 3}), k2 = intList({2, 2}), s2 = intList({2, 2}), p1 = intList({1, 1}), p0 = intList({0, 0});
  Value no = flag(false), yes = flag(true), none = Value::none();
  Value a = outOf(), b = outOf(), c = outOf(), d = outOf(), three = i64(3);
  callOut("aten::avg_pool2d.out", {&x, &k2, &s2, &p1, &no, &yes, &none, &a});
  CHECK(valuesOf(a) == Doubles{0, 0.75, 2.25, 6});
  callOut("aten::avg_pool2d.out", {&x, &k2, &s2, &p1, &no, &no, &none, &b});
  CHECK(valuesOf(b) == Doubles{0, 1.5, 4.5, 6});
  callOut("aten::avg_pool2d.out", {&x, &k2, &s2, &p1, &no, &yes, &three, &c});
  CHECK(valuesOf(c) == Doubles{0, 1, 3, 8});
  callOut("aten::avg_pool2d.out", {&x, &k2, &s2, &p0, &yes, &yes, &none, &d});
  CHECK(valuesOf(d) == Doubles{2, 3.5, 6.5, 8}); // partial windows divide by their in-bounds size
}

TEST_CASE("adaptive average pooling and upsampling", "[kernels][pool]") {
  Value x = iota({1, 1, 3, 3}), size = intList({2, 2}), out = outOf();
  callOut("aten::_adaptive_avg_pool2d.out", {&x, &size, &out});
  CHECK(valuesOf(out) == Doubles{2, 3, 5, 6});
  Value one = intList({1, 1}), gap = outOf();
  callOut("aten::_adaptive_avg_pool2d.out", {&x, &one, &gap});
  CHECK(valuesOf(gap) == Doubles{4});

  Value y = floats({1, 1, 2, 2}, {1, 2, 3, 4}), s4 = intList({4, 4}), s3 = intList({3, 3}), none = Value::none();
  Value n4 = outOf(), n3 = outOf();
  callOut("aten::upsample_nearest2d.vec_out", {&y, &s4, &none, &n4});
  CHECK(valuesOf(n4) == Doubles{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  callOut("aten::upsample_nearest2d.vec_out", {&y, &s3, &none, &n3});
  CHECK(valuesOf(n3) == Doubles{1, 1, 2, 1, 1, 2, 3, 3, 4});
  Value scales = doubles({2.0, 2.0}), ns = outOf();
  callOut("aten::upsample_nearest2d.vec_out", {&y, &none, &scales, &ns});
  CHECK(sizesOf(ns) == Sizes{1, 1, 4, 4});

  Value noAlign = flag(false), align = flag(true), b4 = outOf(), b3 = outOf();
  callOut("aten::upsample_bilinear2d.vec_out", {&y, &s4, &noAlign, &none, &b4});
  checkClose(valuesOf(b4), {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
  callOut("aten::upsample_bilinear2d.vec_out", {&y, &s3, &align, &none, &b3});
  checkClose(valuesOf(b3), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});

  // The non-vec forms take output_size plus optional scales.
  Value n4b = outOf(), b4b = outOf();
  callOut("aten::upsample_nearest2d.out", {&y, &s4, &none, &none, &n4b});
  CHECK(valuesOf(n4b) == valuesOf(n4));
  callOut("aten::upsample_bilinear2d.out", {&y, &s4, &noAlign, &none, &none, &b4b});
  checkClose(valuesOf(b4b), valuesOf(b4));
  // A given scale drives the index mapping: 3 outputs with scale 3 read rows 0, 0, 0.
  Value s31 = intList({3, 1}), three = Value::of(3.0), n31 = outOf();
  Value col = floats({1, 1, 2, 1}, {1, 2});
  callOut("aten::upsample_nearest2d.out", {&col, &s31, &three, &none, &n31});
  CHECK(valuesOf(n31) == Doubles{1, 1, 1});
}
