//===- tests/Run/NpyTest.cpp - .npy read/write, literals, comparison ------===//
#include "Run/Compare.h"
#include "Run/Inputs.h"
#include "Run/Npy.h"
#include "Run/TensorData.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace exir;
using namespace exir::run;

namespace {
Tensor floats(std::vector<int64_t> sizes, std::vector<double> values) {
  Tensor t = Tensor::make(ScalarType::Float, std::move(sizes));
  fillFromDoubles(t, values);
  return t;
}
} // namespace

TEST_CASE("npy: the header numpy writes for a 2x3 float32 array", "[run][npy]") {
  std::string bytes = encodeNpy(floats({2, 3}, {1, 2, 3, 4, 5, 6}));
  REQUIRE(bytes.size() == 128 + 24);
  CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  CHECK(uint8_t(bytes[8]) == 118); // header length: the data starts at byte 10 + 118 = 128
  CHECK(bytes.substr(10, 59) == "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  CHECK(bytes[127] == '\n');
  float first;
  std::memcpy(&first, bytes.data() + 128, 4);
  CHECK(first == 1.0f);
}

TEST_CASE("npy: shapes of rank 0 and 1 use Python tuple syntax", "[run][npy]") {
  CHECK(encodeNpy(Tensor::make(ScalarType::Long, {})).find("'shape': (), }") != std::string::npos);
  CHECK(encodeNpy(Tensor::make(ScalarType::Bool, {3})).find("'descr': '|b1', 'fortran_order': False, 'shape': (3,), }") !=
        std::string::npos);
}

TEST_CASE("npy: every supported dtype round-trips", "[run][npy]") {
  for (ScalarType t : {ScalarType::Float, ScalarType::Double, ScalarType::Half, ScalarType::Long, ScalarType::Int,
                       ScalarType::Short, ScalarType::Char, ScalarType::Byte, ScalarType::Bool}) {
    INFO(shortName(t));
    Tensor x = Tensor::make(t, {2, 2});
    fillFromDoubles(x, {0, 1, 1, 0});
    Tensor back = parseNpy(encodeNpy(x));
    CHECK(back.dtype == t);
    CHECK(back.sizes == std::vector<int64_t>{2, 2});
    CHECK(toDoubles(back) == std::vector<double>{0, 1, 1, 0});
  }
}

TEST_CASE("npy: version 2.0 headers (32-bit length) are read", "[run][npy]") {
  std::string v1 = encodeNpy(floats({2}, {1.5, -2}));
  size_t headerLen = uint8_t(v1[8]) | (size_t(uint8_t(v1[9])) << 8);
  std::string v2 = std::string("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) v2 += char((headerLen >> (8 * i)) & 0xFF);
  v2 += v1.substr(10);
  Tensor t = parseNpy(v2);
  CHECK(t.sizes == std::vector<int64_t>{2});
  CHECK(toDoubles(t) == std::vector<double>{1.5, -2});
}

TEST_CASE("npy: a tensor in another dim order is written in logical order", "[run][npy]") {
  // Logical [[1, 2, 3], [4, 5, 6]] stored column-major (dim order [1, 0]).
  Tensor t = Tensor::make(ScalarType::Float, {2, 3});
  t.dimOrder = {1, 0};
  fillFromDoubles(t, {1, 2, 3, 4, 5, 6});
  CHECK(t.ptr<float>()[1] == 4.0f); // storage really is column-major
  CHECK(toDoubles(parseNpy(encodeNpy(t))) == std::vector<double>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("npy: the shared corpus files parse", "[run][npy]") {
  Tensor in = readNpyFile(EXIR_SHARED_DIR "/corpus/torch-export/kv_index_copy.in1.npy");
  CHECK(in.numel() > 0);
  CHECK(!npyDescr(in.dtype).empty());
}

TEST_CASE("npy: bad input is refused with a reason", "[run][npy]") {
  CHECK_THROWS_WITH(parseNpy("hello world"), Catch::Contains("magic"));
  std::string big = encodeNpy(floats({1}, {1}));
  std::string bigEndian = big;
  bigEndian.replace(bigEndian.find("<f4"), 3, ">f4");
  CHECK_THROWS_WITH(parseNpy(bigEndian), Catch::Contains("big-endian"));
  std::string fortran = big;
  fortran.replace(fortran.find("False"), 5, "True ");
  CHECK_THROWS_WITH(parseNpy(fortran), Catch::Contains("Fortran"));
  CHECK_THROWS_WITH(parseNpy(big.substr(0, big.size() - 2)), Catch::Contains("needs 4"));
  std::string complex = big;
  complex.replace(complex.find("<f4"), 3, "<c8");
  CHECK_THROWS_WITH(parseNpy(complex), Catch::Contains("not supported"));
}

TEST_CASE("inputs: literals give the nested shape or fill the method's shape", "[run][inputs]") {
  InputInfo info;
  info.name = "x";
  info.dtype = ScalarType::Float;
  info.sizes = {2, 2};
  Value v = parseInputLiteral("[[1, 2], [3, 4.5]]", info, info.sizes);
  CHECK(v.toTensor().sizes == std::vector<int64_t>{2, 2});
  CHECK(toDoubles(v.toTensor()) == std::vector<double>{1, 2, 3, 4.5});
  Value filled = parseInputLiteral("7", info, {3});
  CHECK(toDoubles(filled.toTensor()) == std::vector<double>{7, 7, 7});
  CHECK_THROWS_WITH(parseInputLiteral("[[1, 2], [3]]", info, info.sizes), Catch::Contains("regular"));
  CHECK_THROWS_WITH(parseInputLiteral("[1, x]", info, info.sizes), Catch::Contains("column 5"));
  InputInfo scalar;
  scalar.isTensor = false;
  scalar.scalar = Value::of(0.0);
  CHECK(parseInputLiteral("2.5", scalar, {}).toDouble() == 2.5);
  CHECK(parseSizes("3,4") == std::vector<int64_t>{3, 4});
  CHECK_THROWS(parseSizes("3,-1"));
}

TEST_CASE("inputs: random inputs depend only on the seed", "[run][inputs]") {
  InputInfo info;
  info.dtype = ScalarType::Float;
  std::mt19937_64 a(5), b(5), c(6);
  auto x = toDoubles(randomInput(info, {8}, a).toTensor());
  CHECK(x == toDoubles(randomInput(info, {8}, b).toTensor()));
  CHECK(x != toDoubles(randomInput(info, {8}, c).toTensor()));
  for (double v : x) CHECK((v >= -1 && v < 1));
}

TEST_CASE("compare: allclose semantics and a one-line report", "[run][compare]") {
  Tolerance tol;
  tol.atol = 1e-3;
  tol.rtol = 0;
  Value a = Value::of(floats({3}, {1, 2, 3})), b = Value::of(floats({3}, {1, 2.0005, 3.5}));
  auto diff = compareValues(a, b, tol);
  REQUIRE(diff);
  CHECK(*diff == "max abs error 0.5, max rel error 0.1428571, first differing index 2 (got 3, expected 3.5)");
  CHECK_FALSE(compareValues(a, Value::of(floats({3}, {1, 2.0005, 3})), tol));
  CHECK(*compareValues(a, Value::of(floats({1, 3}, {1, 2, 3})), tol) == "shape [3], expected [1, 3]");
  tol.scaleAtol = true; // 1e-3 * 1000
  CHECK_FALSE(compareValues(Value::of(floats({1}, {1000})), Value::of(floats({1}, {1000.9})), tol));
}

TEST_CASE("compare: values print with their dtype and shape", "[run][compare]") {
  CHECK(formatValue(Value::of(floats({2, 2}, {1, 2, 3, 4.5}))) == "f32[2, 2] [[1, 2], [3, 4.5]]");
  CHECK(formatValue(Value::of(floats({}, {2}))) == "f32[] 2");
  CHECK(formatValue(Value::of(floats({6}, {1, 2, 3, 4, 5, 6})), 4) == "f32[6] [1, 2, ..., 5, 6] (6 elements)");
}
