//===- Support/Hash.cpp - SHA-256 and base64 ------------------------------===//
#include "Support/Hash.h"
#include "Support/Error.h"

#include <algorithm>
#include <array>

#include <libdeflate.h>
#include <openssl/evp.h>
#include <zlib.h>

#ifdef EXIR_HAVE_ISAL
#include <isa-l/crc.h>
#endif

namespace exir {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX *>(ctx_), EVP_sha256(), nullptr) != 1)
    throw InternalError("SHA-256 initialisation failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX *>(ctx_)); }

void Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX *>(ctx_), bytes.data(), bytes.size());
}

std::string Sha256::hexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX *>(ctx_), digest, &length);
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < length; ++i) {
    out.push_back(hex[digest[i] >> 4]);
    out.push_back(hex[digest[i] & 15]);
  }
  return out;
}

std::string sha256Hex(std::string_view bytes) {
  Sha256 hasher;
  hasher.update(bytes);
  return hasher.hexDigest();
}

uint32_t crc32Update(uint32_t crc, std::string_view bytes) {
  if (bytes.empty()) return crc;
#ifdef EXIR_HAVE_ISAL
  // ISA-L's reflected CRC-32 is zlib's too (same pre- and post-inversion); its
  // VPCLMULQDQ/AVX-512 kernel, picked at run time, runs at about 44 GB/s on
  // cached bytes against libdeflate 1.14's 11 GB/s: every weight byte passes here.
  return crc32_gzip_refl(crc, reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size());
#else
  // libdeflate's CRC-32 (PCLMUL/AVX where the CPU has them) is zlib's: same
  // polynomial, same pre- and post-inversion, so the values are zlib's.
  return libdeflate_crc32(crc, bytes.data(), bytes.size());
#endif
}

uint32_t crc32UpdateZeros(uint32_t crc, uint64_t count) {
  // CRC-32 of 2^k zero bytes, by doubling: crc(z || z) = combine(crc(z), crc(z), |z|).
  static const std::array<uint32_t, 64> zerosOfPowerOfTwo = [] {
    std::array<uint32_t, 64> table{};
    table[0] = uint32_t(::crc32(0, reinterpret_cast<const Bytef *>("\0"), 1));
    for (size_t k = 1; k < table.size(); ++k)
      table[k] = uint32_t(::crc32_combine64(table[k - 1], table[k - 1], z_off64_t(uint64_t(1) << (k - 1))));
    return table;
  }();
  for (size_t k = 0; count != 0 && k < 63; ++k, count >>= 1)
    if (count & 1)
      crc = uint32_t(::crc32_combine64(crc, zerosOfPowerOfTwo[k], z_off64_t(uint64_t(1) << k)));
  return crc;
}

static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], kAlphabet[v & 63]};
  }
  if (i + 1 == bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], '='};
  }
  return out;
}

std::string base64Decode(std::string_view text) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=' || c == '\n' || c == '\r') continue;
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+' || c == '-') v = 62;
    else if (c == '/' || c == '_') v = 63;
    else throw Error(std::string("invalid base64 character '") + c + "'");
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(char((acc >> bits) & 0xFF));
    }
  }
  return out;
}

} // namespace exir
