//===- Serde/ProgramReader.h - Read any program input, write artifacts -*- C++ -*-===//
//
// Every tool's input goes through readProgram, which recognises:
//  - our stage artifact JSON ({"format": "exir-program", ...});
//  - a bare torch.export ExportedProgram JSON: one method "forward", stage aten
//    (edge if the node targets use edge-dialect spellings);
//  - a PT2 archive (.pt2, torch 2.8+): models/<model>.json, raw weights via
//    data/weights|constants/<model>_{weights,constants}_config.json, or nested
//    torch.save pickles (torch 2.8);
//  - a legacy torch.export.save zip (torch 2.1-2.7): serialized_exported_program.json
//    with weights in nested torch.save zips;
//  - an ETRecord zip: its edge-dialect program (or its ATen one if that is all).
// Constants become DataRefs pointing into the archive file itself at the byte
// offset of the stored member's data: weights are never loaded.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exir {

enum class InputFormat : uint8_t {
  ArtifactJson,   // our stage artifact
  ExportJson,     // bare torch.export ExportedProgram JSON
  Pt2Archive,     // PT2 archive zip
  LegacyExportZip,// torch.export.save zip of torch 2.1-2.7 (and exir/serde save())
  ETRecord,       // ExecuTorch ETRecord zip
};
const char *inputFormatName(InputFormat format);

/// Detects the kind of `path` ("-" = stdin, JSON only; consumes stdin).
InputFormat detectInputFormat(const std::string &path);

/// Reads any supported input ("-" = stdin, JSON only). Throws exir::Error.
Program readProgram(const std::string &path);
/// Same, and says which kind of input it was.
Program readProgram(const std::string &path, InputFormat &format);
struct ExportJsonOptions;
/// Same; `options` apply to the methods of a program artifact (what the later
/// stages read).
Program readProgram(const std::string &path, InputFormat &format, const ExportJsonOptions &options);

/// Throws "input is empty (did the previous stage fail?)" when `bytes` (the
/// whole input read from `path`) is empty or only whitespace: what a pipe
/// gets when the stage before it failed.
void checkInputNotEmpty(std::string_view bytes, const std::string &path);

/// Same as readProgram for JSON text already read (e.g. from stdin, after a
/// look at its first bytes); `path` names it in errors ("-" = stdin).
Program readProgramFromText(std::string_view text, const std::string &path);

/// Every ExportedProgram in an archive, named by their member / model:
/// PT2: model names; legacy zip: "serialized_exported_program"; ETRecord:
/// "edge_dialect_exported_program", "exported_program", "aten_dialect_output/<method>".
std::vector<std::pair<std::string, ExportedProgram>> readArchivePrograms(const std::string &path);

/// Constants of an archive as DataRefs into it (PT2 payload configs, or the
/// nested torch.save pickles of legacy zips and ETRecords).
OrderedMap<ConstantTensor> readArchiveConstants(const std::string &path);

/// FQNs the methods' signatures lift as parameters, buffers or tensor
/// constants that have no entry in the constant table (a torch.export JSON read
/// without its archive), in first-use order.
std::vector<std::string> constantsWithoutData(const Program &program);

/// Supplies constant data from `weightsPath` (a .safetensors file or a .pt2 /
/// torch.export archive), matched by FQN, for every constant the signatures
/// lift; entries from the file replace existing ones. A tensor missing from the
/// file, or with another dtype or shape than the graph's, is an exir::Error.
void attachWeights(Program &program, const std::string &weightsPath);

/// Checks that every file a DataRef of `program` names exists and, where the
/// reference recorded it, still has the size it had when the reference was
/// made (a .pt2 replaced after exir-edge, a lost or rewritten .blobs sidecar).
/// Throws exir::Error naming the constant or delegate. The bytes themselves
/// are checked by exir-emit while it streams them (DataRef::crc32).
void checkDataFiles(const Program &program);

/// Writes the artifact atomically ("-" = stdout, with absolute DataRef paths).
void writeProgram(const Program &program, const std::string &path);

} // namespace exir
