//===- fuzz/FuzzCommon.h - What every libFuzzer target shares ---*- C++ -*-===//
//
// A target feeds one input to reading, parsing and verifying entry points
// only. exir::Error is the expected outcome of bad input and is swallowed by
// fuzzOne(); anything else escapes: another exception (InternalError, a
// yaml-cpp or std:: exception) reaches std::terminate, and libFuzzer reports
// it as a crash, like a sanitizer report, a timeout or an out-of-memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Support/Error.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace exir::fuzz {

inline std::string_view asText(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

/// Runs `body`, swallowing exir::Error only; with EXIR_FUZZ_PRINT=1 in the
/// environment it prints the error, which tells what a tool says for the input.
template <typename Fn> void fuzzOne(Fn &&body) {
  static const bool print = std::getenv("EXIR_FUZZ_PRINT") != nullptr;
  try {
    body();
  } catch (const exir::Error &e) {
    if (print) std::fprintf(stderr, "exir::Error: %s\n", e.render().c_str());
  }
}

/// A file of this process that holds the current input, for readers that take
/// a path (archives, .ptd, rewrite rules). `suffix` is the file name's end.
/// The file is removed when the process exits normally.
inline std::string writeInputFile(std::string_view bytes, const std::string &suffix) {
  struct Remover {
    std::string path;
    ~Remover() { std::remove(path.c_str()); }
  };
  const char *dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/exir-fuzz-" +
                     std::to_string(::getpid()) + suffix;
  static Remover remover{path}; // one path per target and process
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort(); // the harness itself failed, not the code under test
  }
  return path;
}

} // namespace exir::fuzz
