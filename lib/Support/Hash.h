//===- Support/Hash.h - SHA-256 and base64 ---------------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace exir {

/// Incremental SHA-256 (OpenSSL's libcrypto), so large payloads can be streamed.
class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;
  void update(std::string_view bytes);
  /// Lower-case hex digest; the object must not be updated afterwards.
  std::string hexDigest();

private:
  void *ctx_;
};

std::string sha256Hex(std::string_view bytes);

/// CRC-32 (zlib's, the zip checksum): `crc32Update(crc32Update(0, a), b)`
/// equals `crc32Update(0, a + b)`. Checks weight ranges cheaply while they stream.
uint32_t crc32Update(uint32_t crc, std::string_view bytes);
/// `crc32Update(crc, <count zero bytes>)` without touching the bytes
/// (O(log count)): holes of sparse weight files are checked without reading them.
uint32_t crc32UpdateZeros(uint32_t crc, uint64_t count);

std::string base64Encode(std::string_view bytes);
/// Throws exir::Error on characters outside the base64 alphabet.
std::string base64Decode(std::string_view text);

} // namespace exir
