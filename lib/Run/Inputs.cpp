//===- Run/Inputs.cpp - Method inputs from files, literals or a seed ------===//
#include "Run/Inputs.h"
#include "Run/Npy.h"
#include "Run/TensorData.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <cstring>

namespace exir::run {

namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

double parseNumber(const std::string &text, size_t &pos) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
  for (const char *word : {"true", "false"})
    if (text.compare(pos, std::strlen(word), word) == 0) {
      pos += std::strlen(word);
      return word[0] == 't' ? 1 : 0;
    }
  const char *start = text.c_str() + pos;
  char *end = nullptr;
  double v = std::strtod(start, &end);
  if (end == start) throw Error("input literal '" + text + "': expected a number at column " + std::to_string(pos + 1));
  pos += size_t(end - start);
  return v;
}

/// Parses a nested list; fills `values` and checks that the shape is regular.
void parseNested(const std::string &text, size_t &pos, size_t depth, std::vector<int64_t> &shape,
                 std::vector<double> &values) {
  auto skip = [&] { while (pos < text.size() && text[pos] == ' ') ++pos; };
  skip();
  if (pos >= text.size() || text[pos] != '[') {
    if (depth != shape.size()) throw Error("input literal '" + text + "' is not a regular nested list");
    values.push_back(parseNumber(text, pos));
    return;
  }
  ++pos;
  if (depth == shape.size()) shape.push_back(-1);
  int64_t count = 0;
  skip();
  if (pos < text.size() && text[pos] == ']') {
    ++pos;
  } else {
    for (;;) {
      parseNested(text, pos, depth + 1, shape, values);
      ++count;
      skip();
      if (pos < text.size() && text[pos] == ',') { ++pos; continue; }
      if (pos < text.size() && text[pos] == ']') { ++pos; break; }
      throw Error("input literal '" + text + "': expected ',' or ']' at column " + std::to_string(pos + 1));
    }
  }
  if (shape[depth] == -1) shape[depth] = count;
  else if (shape[depth] != count) throw Error("input literal '" + text + "' is not a regular nested list");
}

} // namespace

std::vector<int64_t> parseSizes(const std::string &text) {
  std::vector<int64_t> sizes;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char *end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0) throw Error("sizes '" + text + "' must be non-negative integers d0,d1,...");
    sizes.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return sizes;
}

Value parseInputLiteral(const std::string &text, const InputInfo &info, const std::vector<int64_t> &sizes) {
  size_t pos = 0;
  std::vector<int64_t> shape;
  std::vector<double> values;
  parseNested(text, pos, 0, shape, values);
  while (pos < text.size() && text[pos] == ' ') ++pos;
  if (pos != text.size()) throw Error("input literal '" + text + "' has trailing text at column " + std::to_string(pos + 1));
  if (!info.isTensor) {
    if (!shape.empty()) throw Error("input '" + info.name + "' is a scalar; got a list");
    if (info.scalar.isDouble()) return Value::of(values[0]);
    if (info.scalar.isBool()) return Value::of(values[0] != 0);
    return Value::of(int64_t(values[0]));
  }
  if (shape.empty()) {
    // A single value fills a tensor of the method's shape.
    Tensor t = Tensor::make(info.dtype, sizes);
    fillFromDoubles(t, std::vector<double>(size_t(t.numel()), values[0]));
    return Value::of(std::move(t));
  }
  Tensor t = Tensor::make(info.dtype, shape);
  fillFromDoubles(t, values);
  return Value::of(std::move(t));
}

Value loadInput(const std::string &spec, const InputInfo &info, const std::vector<int64_t> &sizes) {
  if (endsWith(spec, ".npy")) {
    if (!info.isTensor) throw Error("input '" + info.name + "' is a scalar; a .npy file gives a tensor");
    return Value::of(readNpyFile(spec));
  }
  if (endsWith(spec, ".bin")) {
    if (!info.isTensor) throw Error("input '" + info.name + "' is a scalar; a .bin file gives a tensor");
    std::string bytes = readFileOrStdin(spec);
    Tensor t = Tensor::make(info.dtype, sizes);
    if (bytes.size() != t.nbytes())
      throw Error("has " + std::to_string(bytes.size()) + " bytes; input '" + info.name + "' of shape [" +
                      [&] { std::string s; for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]); return s; }() +
                      "] needs " + std::to_string(t.nbytes()) + " (use --sizes for a smaller dynamic input)",
                  spec);
    if (t.nbytes()) std::memcpy(t.data, bytes.data(), t.nbytes());
    return Value::of(std::move(t));
  }
  return parseInputLiteral(spec, info, sizes);
}

Value randomInput(const InputInfo &info, const std::vector<int64_t> &sizes, std::mt19937_64 &rng) {
  if (!info.isTensor) return info.scalar;
  Tensor t = Tensor::make(info.dtype, sizes);
  std::vector<double> values(size_t(t.numel()));
  for (double &v : values) {
    uint64_t r = rng();
    if (isFloatingType(info.dtype)) v = double(r >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    else if (info.dtype == ScalarType::Bool) v = double(r & 1);
    else v = double(r % 4);
  }
  fillFromDoubles(t, values);
  return Value::of(std::move(t));
}

} // namespace exir::run
