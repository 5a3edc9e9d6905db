//===- Serde/ExportJsonDom.h - ExportedProgram from a parsed DOM -*- C++ -*-===//
//
// Internal to lib/Serde: lets documents that embed ExportedPrograms (our stage
// artifact, LoweredBackendModule strings) convert a DOM subtree while keeping
// JSON pointers relative to the outer document.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Serde/ExportJson.h"
#include "Serde/JsonDom.h"

namespace exir {

/// Converts the ExportedProgram object `e`; errors use `reader`'s current path.
ExportedProgram exportedProgramFromDom(json::Element e, json::Reader &reader,
                                       const ExportJsonOptions &options = {});

/// Reads our stage artifact object `e` (see ProgramJson.h); `options` apply
/// to its methods' programs.
Program programFromDom(json::Element e, json::Reader &reader, const std::string &baseDirectory,
                       const ExportJsonOptions &options = {});

/// Reads a torch.export TensorMeta object (also used by PT2 PayloadConfig).
TensorMeta tensorMetaFromDom(json::Element e, json::Reader &reader,
                             const ExportJsonOptions &options = {});

/// Serializer ScalarType number -> c10, honouring the numbering option.
/// Throws at the reader's path for unknown numbers.
ScalarType scalarTypeFromDom(json::Element e, json::Reader &reader,
                             const ExportJsonOptions &options = {});

} // namespace exir
