//===- Support/FileIO.h - Reading inputs and writing outputs atomically ---===//
//
// Every tool reads a file or "-" (stdin) and writes a file or "-" (stdout).
// Outputs are written to a temporary file beside the target and renamed, so a
// failing tool never leaves a partial output file behind.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace exir {

/// Reads a whole file ("-" = stdin). Throws exir::Error naming the file.
std::string readFileOrStdin(const std::string &path);

/// Writes through `produce` to `path` ("-" = stdout) via temp file + rename.
/// If `produce` throws, the temporary file is removed and nothing appears.
void writeFileAtomically(const std::string &path,
                         const std::function<void(std::ostream &)> &produce);

/// Convenience wrapper for an in-memory payload.
void writeFileAtomically(const std::string &path, const std::string &bytes);

/// Reads `length` bytes at `offset` of a file; throws if the file is shorter.
std::string readFileRange(const std::string &path, uint64_t offset, uint64_t length);

/// Size of a file in bytes; throws if it cannot be opened.
uint64_t fileSize(const std::string &path);

/// Directory part of a path ("." when there is none).
std::string parentDirectory(const std::string &path);

} // namespace exir
