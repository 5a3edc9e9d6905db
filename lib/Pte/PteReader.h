//===- Pte/PteReader.h - Parse .pte bytes into a pte::Program ---*- C++ -*-===//
//
// Checks the file the way the runtime does (identifier, extended header rules of
// pte-format.md §2.2 / §4.1), runs the flatbuffers Verifier over the program
// data, then converts every table into the PteModel. Payloads (constants,
// mutable data, delegate blobs, named data, inline buffers) become BlobSources
// that point into one shared copy of the file, so nothing is copied twice.
// Files in the deprecated inline `constant_buffer` layout are read too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"

#include <memory>
#include <string>

namespace exir::pte {

/// Parses a whole .pte file. `fileName` is only used in error messages.
/// Throws exir::Error (with a byte offset or JSON pointer as location) for
/// truncated, corrupted or inconsistent input; never crashes on bad bytes.
Program readPte(const std::string &bytes, const std::string &fileName);

/// Same, without copying: payload BlobSources share `bytes`.
Program readPte(std::shared_ptr<const std::string> bytes, const std::string &fileName);

/// Reads and parses a .pte file ("-" = stdin).
Program readPteFile(const std::string &path);

} // namespace exir::pte
