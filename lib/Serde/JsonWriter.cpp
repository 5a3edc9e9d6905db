//===- Serde/JsonWriter.cpp - Streaming JSON writer in Python's style -----===//
//
// Number and string formatting that matches CPython's json module: repr() of
// floats (shortest round-trip digits, exponent form outside 1e-4 <= |x| < 1e16)
// and ensure_ascii escaping with lower-case hex and surrogate pairs.
//
//===----------------------------------------------------------------------===//
#include "Serde/JsonWriter.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace exir {


void JsonWriter::putEscaped(std::string_view s) {
  // Every node's stack trace has quotes and newlines: the escaped form is
  // built in a reused scratch string, not a fresh one each time.
  scratch_.clear();
  appendJsonString(scratch_, s);
  put(scratch_.data(), scratch_.size());
}

void JsonWriter::integer(int64_t v) {
  beforeValue();
  char *p = room(24);
  size_ += static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - p);
}

void JsonWriter::unsignedInteger(uint64_t v) {
  beforeValue();
  char *p = room(24);
  size_ += static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - p);
}

void JsonWriter::real(double v) {
  beforeValue();
  if (std::isnan(v)) {
    put("\"NaN\"", 5);
  } else if (std::isinf(v)) {
    if (v > 0) put("\"Infinity\"", 10);
    else put("\"-Infinity\"", 11);
  } else {
    scratch_.clear();
    appendPythonFloatRepr(scratch_, v);
    put(scratch_.data(), scratch_.size());
  }
}

void JsonWriter::string(std::string_view s) {
  beforeValue();
  putString(s);
}

void appendPythonFloatRepr(std::string &out, double v) {
  if (v == 0) {
    out += std::signbit(v) ? "-0.0" : "0.0";
    return;
  }
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e[+-]x.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const char *p = buf;
  if (*p == '-') {
    out += '-';
    ++p;
  }
  char digits[32];
  size_t ndigits = 0;
  for (; p < res.ptr && *p != 'e'; ++p)
    if (*p != '.') digits[ndigits++] = *p;
  int exponent = 0;
  std::from_chars(p + 1 + (p[1] == '+'), res.ptr, exponent);
  while (ndigits > 1 && digits[ndigits - 1] == '0') --ndigits;

  // CPython switches to exponent notation when decpt <= -4 or decpt > 16,
  // where the value is 0.d1d2... * 10^decpt.
  int decpt = exponent + 1;
  if (decpt <= -4 || decpt > 16) {
    out += digits[0];
    if (ndigits > 1) {
      out += '.';
      out.append(digits + 1, ndigits - 1);
    }
    out += 'e';
    out += exponent < 0 ? '-' : '+';
    int magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude < 10) out += '0';
    char ebuf[8];
    auto eres = std::to_chars(ebuf, ebuf + sizeof ebuf, magnitude);
    out.append(ebuf, eres.ptr);
    return;
  }
  if (decpt <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-decpt), '0');
    out.append(digits, ndigits);
  } else if (static_cast<size_t>(decpt) >= ndigits) {
    out.append(digits, ndigits);
    out.append(static_cast<size_t>(decpt) - ndigits, '0');
    out += ".0";
  } else {
    out.append(digits, static_cast<size_t>(decpt));
    out += '.';
    out.append(digits + decpt, ndigits - static_cast<size_t>(decpt));
  }
}

namespace {
const char kHex[] = "0123456789abcdef";

void appendEscapedUnit(std::string &out, uint32_t unit) {
  char buf[6] = {'\\', 'u', kHex[(unit >> 12) & 15], kHex[(unit >> 8) & 15], kHex[(unit >> 4) & 15],
                 kHex[unit & 15]};
  out.append(buf, 6);
}

// Decodes one UTF-8 sequence at s[i]; returns the code point and advances i.
// Invalid bytes decode as themselves (Latin-1), which keeps output valid JSON.
uint32_t decodeUtf8(std::string_view s, size_t &i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = byte(i);
  auto continuation = [&](size_t k) { return k < s.size() && (byte(k) & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF && continuation(i + 1)) {
    uint32_t cp = ((b0 & 0x1Fu) << 6) | (byte(i + 1) & 0x3Fu);
    i += 2;
    return cp;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF && continuation(i + 1) && continuation(i + 2)) {
    uint32_t cp = ((b0 & 0x0Fu) << 12) | ((byte(i + 1) & 0x3Fu) << 6) | (byte(i + 2) & 0x3Fu);
    if (cp >= 0x800) {
      i += 3;
      return cp;
    }
  }
  if (b0 >= 0xF0 && b0 <= 0xF4 && continuation(i + 1) && continuation(i + 2) && continuation(i + 3)) {
    uint32_t cp = ((b0 & 0x07u) << 18) | ((byte(i + 1) & 0x3Fu) << 12) |
                  ((byte(i + 2) & 0x3Fu) << 6) | (byte(i + 3) & 0x3Fu);
    if (cp >= 0x10000 && cp <= 0x10FFFF) {
      i += 4;
      return cp;
    }
  }
  i += 1;
  return b0;
}
} // namespace


namespace {
/// The index of the first byte at or after `i` that needs escaping (s.size()
/// if none). The word's mask gives that byte directly: stack traces (a few
/// quotes and newlines in 80 bytes, one per node of a real export) used to
/// rescan each word once per plain byte before the escape.
size_t nextEscape(std::string_view s, size_t i) {
#ifdef __SSE2__
  for (; i + 16 <= s.size(); i += 16)
    if (unsigned mask = jsonEscapeMask16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(s.data() + i))))
      return i + static_cast<size_t>(__builtin_ctz(mask));
#endif
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (uint64_t mask = jsonWordEscapeMask(w)) return i + static_cast<size_t>(__builtin_ctzll(mask) >> 3);
  }
  while (i < s.size() && plainJsonByte(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}
} // namespace

void appendJsonString(std::string &out, std::string_view s) {
  out += '"';
  size_t i = 0, runStart = 0;
  while ((i = nextEscape(s, i)) < s.size()) {
    out.append(s.data() + runStart, i - runStart);
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
    case '"': out += "\\\""; ++i; break;
    case '\\': out += "\\\\"; ++i; break;
    case '\n': out += "\\n"; ++i; break;
    case '\r': out += "\\r"; ++i; break;
    case '\t': out += "\\t"; ++i; break;
    case '\b': out += "\\b"; ++i; break;
    case '\f': out += "\\f"; ++i; break;
    default: {
      uint32_t cp = c < 0x80 ? (++i, c) : decodeUtf8(s, i);
      if (cp >= 0x10000) {
        cp -= 0x10000;
        appendEscapedUnit(out, 0xD800 + (cp >> 10));
        appendEscapedUnit(out, 0xDC00 + (cp & 0x3FF));
      } else {
        appendEscapedUnit(out, cp);
      }
    }
    }
    runStart = i;
  }
  out.append(s.data() + runStart, s.size() - runStart);
  out += '"';
}

std::string indentJson(std::string_view json, int indent) {
  std::string out;
  out.reserve(json.size() + json.size() / 4);
  int depth = 0;
  auto newline = [&] {
    out += '\n';
    out.append(size_t(depth * indent), ' ');
  };
  auto nextNonSpace = [&](size_t i) {
    while (i < json.size() && (json[i] == ' ' || json[i] == '\n' || json[i] == '\t' || json[i] == '\r')) ++i;
    return i;
  };
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    switch (c) {
    case '"': {
      size_t end = i + 1;
      while (end < json.size() && json[end] != '"') end += json[end] == '\\' ? 2 : 1;
      out.append(json.substr(i, std::min(end, json.size() - 1) - i + 1));
      i = end;
      break;
    }
    case '{':
    case '[': {
      size_t next = nextNonSpace(i + 1);
      if (next < json.size() && (json[next] == '}' || json[next] == ']')) {
        out += c;
        out += json[next];
        i = next;
        break;
      }
      out += c;
      ++depth;
      newline();
      break;
    }
    case '}':
    case ']':
      --depth;
      newline();
      out += c;
      break;
    case ',':
      out += ',';
      newline();
      break;
    case ':': out += ": "; break;
    case ' ':
    case '\n':
    case '\t':
    case '\r': break;
    default: out += c;
    }
  }
  out += '\n';
  return out;
}

} // namespace exir
