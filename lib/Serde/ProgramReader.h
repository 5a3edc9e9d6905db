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

/// Every ExportedProgram in an archive, named by their member / model:
/// PT2: model names; legacy zip: "serialized_exported_program"; ETRecord:
/// "edge_dialect_exported_program", "exported_program", "aten_dialect_output/<method>".
std::vector<std::pair<std::string, ExportedProgram>> readArchivePrograms(const std::string &path);

/// Constants of an archive as DataRefs into it (PT2 payload configs, or the
/// nested torch.save pickles of legacy zips and ETRecords).
OrderedMap<ConstantTensor> readArchiveConstants(const std::string &path);

/// Writes the artifact atomically ("-" = stdout, with absolute DataRef paths).
void writeProgram(const Program &program, const std::string &path);

} // namespace exir
