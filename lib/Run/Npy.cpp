//===- Run/Npy.cpp - NumPy .npy files without numpy -----------------------===//
#include "Run/Npy.h"
#include "Run/TensorData.h"
#include "Support/CheckedMath.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <cstring>
#include <functional>

namespace exir::run {

namespace {

struct DescrEntry {
  const char *code; // without the byte-order character
  ScalarType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"f4", ScalarType::Float}, {"f8", ScalarType::Double}, {"f2", ScalarType::Half},
    {"i8", ScalarType::Long},  {"i4", ScalarType::Int},    {"i2", ScalarType::Short},
    {"i1", ScalarType::Char},  {"u1", ScalarType::Byte},   {"b1", ScalarType::Bool},
};

/// The text of `key`'s value in the header dict (up to the next top-level ',').
std::string headerField(const std::string &header, const std::string &key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error("npy header has no '" + key + "'");
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) throw Error("npy header: no value for '" + key + "'");
  size_t i = colon + 1;
  while (i < header.size() && header[i] == ' ') ++i;
  size_t end = i;
  int depth = 0;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(' || c == '[') ++depth;
    else if (c == ')' || c == ']') --depth;
    else if ((c == ',' || c == '}') && depth == 0) break;
  }
  return header.substr(i, end - i);
}

} // namespace

std::string npyDescr(ScalarType t) {
  for (const auto &d : kDescrs)
    if (d.dtype == t) return std::string(t == ScalarType::Bool || t == ScalarType::Char || t == ScalarType::Byte ? "|" : "<") + d.code;
  return "";
}

Tensor parseNpy(const std::string &bytes) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw Error("not a .npy file (no \\x93NUMPY magic)");
  int major = uint8_t(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error("truncated .npy header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i) headerLen |= size_t(uint8_t(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    throw Error(".npy version " + std::to_string(major) + " is not supported (1, 2 and 3 are)");
  }
  if (headerStart + headerLen > bytes.size()) throw Error("truncated .npy header");
  std::string header = bytes.substr(headerStart, headerLen);

  std::string descr = headerField(header, "descr");
  if (descr.size() < 4 || (descr[0] != '\'' && descr[0] != '"'))
    throw Error("npy descr " + descr + " is not a simple dtype string");
  descr = descr.substr(1, descr.size() - 2);
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order == '>' && code != "i1" && code != "u1" && code != "b1")
    throw Error("npy dtype " + descr + " is big-endian; only little-endian data is supported");
  ScalarType dtype = ScalarType::Undefined;
  for (const auto &d : kDescrs)
    if (code == d.code) dtype = d.dtype;
  if (dtype == ScalarType::Undefined || (order != '<' && order != '|' && order != '=' && order != '>'))
    throw Error("npy dtype " + descr + " is not supported (f2 f4 f8 i1 i2 i4 i8 u1 b1)");

  if (headerField(header, "fortran_order").find("True") != std::string::npos)
    throw Error("npy data in Fortran order is not supported (save a C-order array)");

  std::string shape = headerField(header, "shape");
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < shape.size();) {
    if (shape[i] >= '0' && shape[i] <= '9') {
      size_t end = i;
      while (end < shape.size() && shape[end] >= '0' && shape[end] <= '9') ++end;
      if (end - i > 18) throw Error("npy shape " + shape + " has a size beyond 64 bits");
      sizes.push_back(std::stoll(shape.substr(i, end - i)));
      i = end;
    } else if (shape[i] == '(' || shape[i] == ')' || shape[i] == ',' || shape[i] == ' ' || shape[i] == 'L') {
      ++i;
    } else {
      throw Error("npy shape " + shape + " is malformed");
    }
  }
  // The shape is checked against the data before anything is allocated.
  std::optional<int64_t> numel = checkedProduct(sizes);
  std::optional<int64_t> needed = numel ? checkedMul<int64_t>(*numel, int64_t(elementSize(dtype))) : std::nullopt;
  size_t body = headerStart + headerLen;
  if (!needed || uint64_t(*needed) > bytes.size() - body)
    throw Error("npy data is " + std::to_string(bytes.size() - body) + " bytes; shape " + shape + " needs " +
                (needed ? std::to_string(*needed) : std::string("more than 2^63")));
  Tensor t = Tensor::make(dtype, sizes);
  if (bytes.size() - body < t.nbytes())
    throw Error("npy data is " + std::to_string(bytes.size() - body) + " bytes; shape " + shape + " needs " +
                std::to_string(t.nbytes()));
  if (t.nbytes()) std::memcpy(t.data, bytes.data() + body, t.nbytes());
  return t;
}

Tensor readNpyFile(const std::string &path) {
  try {
    return parseNpy(readFileOrStdin(path));
  } catch (Error &e) {
    e.withFile(path);
    throw;
  }
}

namespace {
std::string npyHeader(const Tensor &t) {
  std::string descr = npyDescr(t.dtype);
  if (descr.empty()) throw Error(std::string("dtype ") + shortName(t.dtype) + " has no .npy equivalent");
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.sizes.size(); ++i) header += std::to_string(t.sizes[i]) + (t.sizes.size() == 1 || i + 1 < t.sizes.size() ? "," : "") + (i + 1 < t.sizes.size() ? " " : "");
  header += "), }";
  // Pad with spaces so that the data starts at a multiple of 64; the header ends in '\n'.
  bool v2 = header.size() + 11 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(v2 ? 2 : 1);
  out += char(0);
  size_t len = header.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += char((len >> (8 * i)) & 0xFF);
  out += header;
  return out;
}

/// Calls sink with the header, then the data in logical order.
void emitNpy(const Tensor &t, const std::function<void(const char *, size_t)> &sink) {
  std::string header = npyHeader(t);
  sink(header.data(), header.size());
  if (t.isContiguous()) {
    sink(reinterpret_cast<const char *>(t.data), t.nbytes());
  } else {
    Tensor c = contiguousCopy(t);
    sink(reinterpret_cast<const char *>(c.data), c.nbytes());
  }
}
} // namespace

std::string encodeNpy(const Tensor &t) {
  std::string out;
  emitNpy(t, [&](const char *p, size_t n) { out.append(p, n); });
  return out;
}

void writeNpyFile(const std::string &path, const Tensor &t) {
  writeFileAtomically(path, [&](std::ostream &os) {
    emitNpy(t, [&](const char *p, size_t n) { os.write(p, std::streamsize(n)); });
  });
}

} // namespace exir::run
