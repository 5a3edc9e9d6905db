//===- Serde/ProgramJson.h - The stage artifact ("program JSON") -*- C++ -*-===//
//
// Our artifact between stages: a header (format, version, stage), the methods
// as torch.export ExportedProgram objects, one constant table, delegates and
// memory plans. Weights never travel inside it: constants and delegate blobs
// are DataRefs naming a file, an offset and a length (or small inline base64).
// The format is documented in schema/artifact.md.
//
// Paths: in the JSON, DataRef files are relative to the JSON file's directory;
// in memory after reading they are absolute. Writing to a file makes them
// relative to the output's directory; writing to stdout keeps them absolute.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <string>
#include <string_view>

namespace exir {

class JsonWriter;

inline constexpr const char *kArtifactFormat = "exir-program";
inline constexpr int64_t kArtifactFormatVersion = 1;

/// Parses an artifact document. Relative DataRef paths are resolved against
/// `baseDirectory` (the JSON file's directory; "" = current directory).
Program readProgramJson(std::string_view json, const std::string &file,
                        const std::string &baseDirectory);

/// Serializes `program`. DataRef paths are written relative to `outputDir`, or
/// absolute when `outputDir` is empty (stdout). In-memory relative paths are
/// first resolved against program.baseDirectory.
std::string writeProgramJsonString(const Program &program, const std::string &outputDir);
void writeProgramJson(const Program &program, const std::string &outputDir, JsonWriter &writer);

/// Wraps a single ExportedProgram as a one-method program ("forward").
Program programFromExportedProgram(ExportedProgram ep, Stage stage);

/// Aten or Edge, judged by the node targets (edge-dialect spellings => Edge).
Stage guessStage(const ExportedProgram &ep);

} // namespace exir
