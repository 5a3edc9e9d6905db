//===- tests/Serde/StoredZip.h - Test archives with STORED members -*- C++ -*-===//
#pragma once

#include <catch2/catch.hpp>
#include <zip.h>

#include <string>
#include <utility>
#include <vector>

namespace exir::test {

// Creates a zip whose members are all STORED, as torch's writers do.
inline void writeStoredZip(const std::string &path,
                           const std::vector<std::pair<std::string, std::string>> &members) {
  int err = 0;
  zip_t *za = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  REQUIRE(za);
  for (const auto &[name, data] : members) {
    zip_source_t *src = zip_source_buffer(za, data.data(), data.size(), 0);
    REQUIRE(src);
    zip_int64_t index = zip_file_add(za, name.c_str(), src, ZIP_FL_OVERWRITE);
    REQUIRE(index >= 0);
    REQUIRE(zip_set_file_compression(za, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) == 0);
  }
  REQUIRE(zip_close(za) == 0);
}

} // namespace exir::test
