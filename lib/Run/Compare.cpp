//===- Run/Compare.cpp - Comparing and printing run results ---------------===//
#include "Run/Compare.h"
#include "Run/TensorData.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace exir::run {

namespace {

std::string shapeText(const std::vector<int64_t> &sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string number(double v) {
  std::ostringstream os;
  os.precision(7);
  os << v;
  return os.str();
}

std::vector<double> scalarsOf(const Value &v) {
  if (v.isTensor()) return toDoubles(v.toTensor());
  if (v.isInt()) return {double(v.toInt())};
  if (v.isDouble()) return {v.toDouble()};
  if (v.isBool()) return {v.toBool() ? 1.0 : 0.0};
  return {};
}

} // namespace

std::optional<std::string> compareValues(const Value &actual, const Value &expected, const Tolerance &tol) {
  if (actual.isTensor() != expected.isTensor())
    return std::string("got a ") + actual.kindName() + ", expected a " + expected.kindName();
  if (actual.isTensor()) {
    const Tensor &a = actual.toTensor(), &e = expected.toTensor();
    if (a.sizes != e.sizes) return "shape " + shapeText(a.sizes) + ", expected " + shapeText(e.sizes);
    if (a.dtype != e.dtype) return std::string("dtype ") + shortName(a.dtype) + ", expected " + shortName(e.dtype);
  } else if (actual.isNone() || expected.isNone()) {
    if (actual.isNone() != expected.isNone()) return std::string("got ") + actual.kindName() + ", expected " + expected.kindName();
    return std::nullopt;
  }
  std::vector<double> av = scalarsOf(actual), ev = scalarsOf(expected);
  double maxExpected = 0;
  for (double x : ev)
    if (std::isfinite(x)) maxExpected = std::max(maxExpected, std::fabs(x));
  double atol = tol.scaleAtol ? tol.atol * std::max(1.0, maxExpected) : tol.atol;
  double maxAbs = 0, maxRel = 0;
  int64_t first = -1;
  for (size_t i = 0; i < av.size() && i < ev.size(); ++i) {
    double a = av[i], e = ev[i];
    bool bothNan = std::isnan(a) && std::isnan(e);
    double diff = bothNan ? 0 : (a == e ? 0 : std::fabs(a - e));
    if (std::isnan(diff)) diff = INFINITY;
    maxAbs = std::max(maxAbs, diff);
    if (e != 0) maxRel = std::max(maxRel, diff / std::fabs(e));
    else if (diff != 0) maxRel = INFINITY;
    if (first < 0 && !(diff <= atol + tol.rtol * std::fabs(e))) first = int64_t(i);
  }
  if (first < 0) return std::nullopt;
  return "max abs error " + number(maxAbs) + ", max rel error " + number(maxRel) + ", first differing index " +
         std::to_string(first) + " (got " + number(av[size_t(first)]) + ", expected " + number(ev[size_t(first)]) + ")";
}

std::string formatValue(const Value &v, size_t maxElements) {
  if (v.isNone()) return "None";
  if (v.isInt()) return "int " + std::to_string(v.toInt());
  if (v.isDouble()) return "float " + number(v.toDouble());
  if (v.isBool()) return std::string("bool ") + (v.toBool() ? "true" : "false");
  if (!v.isTensor()) return v.kindName();
  const Tensor &t = v.toTensor();
  std::string out = std::string(shortName(t.dtype)) + shapeText(t.sizes) + " ";
  std::vector<double> values = toDoubles(t);
  if (t.sizes.empty()) return out + (values.empty() ? "" : number(values[0]));
  size_t n = values.size();
  if (n > maxElements) {
    // Long tensors: the first and last elements, flattened.
    out += "[";
    for (size_t i = 0; i < maxElements / 2; ++i) out += number(values[i]) + ", ";
    out += "...";
    for (size_t i = n - maxElements / 2; i < n; ++i) out += ", " + number(values[i]);
    return out + "] (" + std::to_string(n) + " elements)";
  }
  // Nested brackets in C order.
  std::vector<int64_t> index(t.sizes.size(), 0);
  out += std::string(t.sizes.size(), '[');
  for (size_t i = 0; i < n; ++i) {
    out += number(values[i]);
    size_t closed = 0;
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < t.sizes[d]) break;
      index[d] = 0;
      ++closed;
    }
    if (i + 1 < n) out += std::string(closed, ']') + ", " + std::string(closed, '[');
  }
  out += std::string(t.sizes.size(), ']');
  return out;
}

} // namespace exir::run
