//===- Support/Error.cpp - One-line diagnostics ---------------------------===//
//
// Diagnostics echo names, targets and paths taken from the input. A newline in
// one would split the `tool: error: ...` line, and a huge one would flood the
// terminal, so every rendered message goes through oneLineMessage.
//
//===----------------------------------------------------------------------===//
#include "Support/Error.h"

#include <algorithm>
#include <cctype>

namespace exir {

namespace {

void appendEscaped(std::string &out, unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  switch (c) {
  case '\n': out += "\\n"; return;
  case '\r': out += "\\r"; return;
  case '\t': out += "\\t"; return;
  default: break;
  }
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

bool isControl(unsigned char c) { return c < 0x20 || c == 0x7f; }
bool isWord(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Length of the UTF-8 sequence starting at `c` (1 for a stray continuation byte).
size_t utf8Length(unsigned char c) {
  if (c >= 0xf0 && c < 0xf8) return 4;
  if (c >= 0xe0) return 3;
  if (c >= 0xc0) return 2;
  return 1;
}

} // namespace

std::string escapeControlCharacters(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (isControl(static_cast<unsigned char>(c))) appendEscaped(out, static_cast<unsigned char>(c));
    else out += c;
  }
  return out;
}

std::string shortLocation(const std::string &location) {
  if (location.size() <= kMaxLocationLength) return location;
  // Cut at UTF-8 character boundaries.
  auto boundary = [&](size_t at) {
    while (at > 0 && at < location.size() && (static_cast<unsigned char>(location[at]) & 0xc0) == 0x80) --at;
    return at;
  };
  size_t head = boundary(kMaxLocationLength / 2), tail = boundary(location.size() - kMaxLocationLength / 3);
  return location.substr(0, head) + "\xe2\x80\xa6" + location.substr(tail);
}

std::string oneLineMessage(std::string_view text) {
  static const char kEllipsis[] = "\xe2\x80\xa6"; // U+2026
  std::string out;
  out.reserve(std::min(text.size(), kMaxMessageLength) + 16);
  bool inQuote = false;
  size_t quotedLength = 0; // characters of the current quoted run so far
  bool cut = false;         // the current quoted run was cut
  for (size_t i = 0; i < text.size();) {
    if (out.size() >= kMaxMessageLength) {
      out += kEllipsis;
      break;
    }
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t n = std::min(utf8Length(c), text.size() - i);
    // A quote opens a run after a non-word character and closes it before
    // one, so the apostrophe of "can't" neither opens nor closes a run.
    bool opens = !inQuote && (i == 0 || !isWord(text[i - 1]));
    bool closes = inQuote && (i + 1 == text.size() || !isWord(text[i + 1]));
    if (c == '\'' && (opens || closes)) {
      inQuote = opens;
      if (closes && cut) out += kEllipsis;
      quotedLength = 0;
      cut = false;
      out += '\'';
      ++i;
      continue;
    }
    if (inQuote && ++quotedLength > kMaxQuotedInMessage) {
      cut = true;
      i += n;
      continue;
    }
    if (isControl(c)) appendEscaped(out, c);
    else out.append(text.data() + i, n);
    i += n;
  }
  if (inQuote && cut) out += kEllipsis;
  return out;
}

} // namespace exir
