//===- tests/Support/HashTest.cpp - SHA-256 and base64 --------------------===//
//
// SHA-256 against the FIPS 180-2 test vectors (one-shot and streamed in odd
// chunks), base64 against the RFC 4648 vectors, a round trip over every byte
// value, the URL-safe alphabet, and the error for characters outside it.
//
//===----------------------------------------------------------------------===//
#include "Support/Error.h"
#include "Support/Hash.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include <zlib.h>

using namespace exir;

TEST_CASE("sha256Hex matches the FIPS 180-2 vectors", "[hash]") {
  CHECK(sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("Sha256 streamed in chunks equals the one-shot digest", "[hash]") {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(char(i));
  Sha256 hasher;
  // Chunk sizes 1, 2, 3, ... so chunk boundaries fall inside SHA-256 blocks.
  size_t pos = 0;
  for (size_t chunk = 1; pos < bytes.size(); ++chunk) {
    size_t n = std::min(chunk, bytes.size() - pos);
    hasher.update(std::string_view(bytes).substr(pos, n));
    pos += n;
  }
  std::string digest = hasher.hexDigest();
  CHECK(digest == "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880");
  CHECK(digest == sha256Hex(bytes));
  CHECK(digest.size() == 64);
}

TEST_CASE("base64Encode matches the RFC 4648 vectors", "[hash]") {
  CHECK(base64Encode("") == "");
  CHECK(base64Encode("f") == "Zg==");
  CHECK(base64Encode("fo") == "Zm8=");
  CHECK(base64Encode("foo") == "Zm9v");
  CHECK(base64Encode("foob") == "Zm9vYg==");
  CHECK(base64Encode("fooba") == "Zm9vYmE=");
  CHECK(base64Encode("foobar") == "Zm9vYmFy");
  // A float 1.0f, as inline constants carry it.
  CHECK(base64Encode(std::string("\x00\x00\x80\x3f", 4)) == "AACAPw==");
}

TEST_CASE("base64Decode inverts the RFC 4648 vectors", "[hash]") {
  CHECK(base64Decode("") == "");
  CHECK(base64Decode("Zg==") == "f");
  CHECK(base64Decode("Zm8=") == "fo");
  CHECK(base64Decode("Zm9v") == "foo");
  CHECK(base64Decode("Zm9vYg==") == "foob");
  CHECK(base64Decode("Zm9vYmE=") == "fooba");
  CHECK(base64Decode("Zm9vYmFy") == "foobar");
  // Line breaks (MIME style) are skipped.
  CHECK(base64Decode("Zm9v\r\nYmFy\n") == "foobar");
}

TEST_CASE("base64 round-trips every byte value", "[hash]") {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(char(255 - i));
  for (size_t len : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(100), size_t(256)}) {
    std::string slice = bytes.substr(0, len);
    std::string text = base64Encode(slice);
    CHECK(text.size() == (len + 2) / 3 * 4);
    CHECK(base64Decode(text) == slice);
  }
}

TEST_CASE("base64Decode accepts the URL-safe alphabet", "[hash]") {
  // Sextets 62 and 63 are '+' '/' in the standard and '-' '_' in the URL-safe alphabet.
  std::string bytes("\xfb\xef\xbe\xfb\xef\xbf", 6);
  CHECK(base64Encode(bytes) == "+++++++/");
  CHECK(base64Decode("+++++++/") == bytes);
  CHECK(base64Decode("-------_") == bytes);
}

TEST_CASE("base64Decode rejects characters outside the alphabet", "[hash]") {
  try {
    base64Decode("Zm9v*mFy");
    FAIL("no error thrown");
  } catch (const Error &e) {
    CHECK(e.message() == "invalid base64 character '*'");
  }
  CHECK_THROWS_AS(base64Decode("Zm 9v"), Error);
  CHECK_THROWS_AS(base64Decode("Zm9v\x01"), Error);
}

TEST_CASE("crc32Update: the zip CRC-32, incremental", "[support][hash]") {
  CHECK(exir::crc32Update(0, "") == 0u);
  CHECK(exir::crc32Update(0, "123456789") == 0xcbf43926u); // the standard check value
  CHECK(exir::crc32Update(exir::crc32Update(0, "1234"), "56789") == 0xcbf43926u);
}

TEST_CASE("crc32Update equals zlib's crc32 at every size and alignment", "[hash]") {
  // crc32Update is not zlib's own code; the values must stay zlib's (they are
  // recorded in .pt2 archives and planned JSON).
  std::mt19937_64 rng(14);
  std::string pool(size_t(1) << 20, '\0');
  for (char &c : pool) c = char(rng());
  auto zlibCrc = [](uint32_t crc, const char *p, size_t n) {
    return uint32_t(::crc32(crc, reinterpret_cast<const Bytef *>(p), uInt(n)));
  };
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (size_t n : {511, 512, 513, 1023, 1024, 4095, 4096, 4097, 65536, 65539, 1000000}) sizes.push_back(n);
  for (size_t n : sizes)
    for (size_t align = 0; align < 64; align += (n > 4096 ? 13 : 1)) {
      const char *p = pool.data() + align;
      uint32_t seed = uint32_t(rng());
      INFO("size " << n << " alignment " << align);
      REQUIRE(crc32Update(0, std::string_view(p, n)) == zlibCrc(0, p, n));
      REQUIRE(crc32Update(seed, std::string_view(p, n)) == zlibCrc(seed, p, n));
      size_t split = n ? size_t(rng() % n) : 0;
      REQUIRE(crc32Update(crc32Update(0, std::string_view(p, split)), std::string_view(p + split, n - split)) ==
              zlibCrc(0, p, n));
    }
}

TEST_CASE("crc32UpdateZeros equals the CRC-32 of that many zero bytes", "[hash]") {
  for (uint64_t count : {0ull, 1ull, 2ull, 3ull, 63ull, 64ull, 4096ull, 65537ull, 1000003ull}) {
    std::string zeros(count, '\0');
    CHECK(crc32UpdateZeros(0, count) == crc32Update(0, zeros));
    CHECK(crc32UpdateZeros(crc32Update(0, "abc"), count) == crc32Update(0, "abc" + zeros));
  }
}
