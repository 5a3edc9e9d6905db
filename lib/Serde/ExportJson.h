//===- Serde/ExportJson.h - torch.export ExportedProgram JSON <-> IR -*- C++ -*-===//
//
// Reads every form of the torch.export ExportedProgram JSON that torch 2.x and
// ExecuTorch's exir/serde have written (see torch-export-json.md):
//  - schema_version as a bare int (torch <= 2.2) or {major, minor} (8.x up to
//    8.20; unknown minors are read, an unknown major is refused);
//  - unions as single-key objects, as all-keys objects with null inactive
//    members (pre-5.x), or as {"$type", "$value"} (briefly in early 2024);
//    an active as_none is `true` or `[]`;
//  - omitted optional fields (defaults from schema.py), "Infinity"/"-Infinity"
//    strings and bare Infinity/NaN tokens in float fields, enum numbers or names;
//  - torch 2.1 specifics: TensorValue {"meta": ...} wrappers, plain-int
//    storage_offset, bare-string SymExpr, the dict-form GraphSignature, `dialect`.
// ScalarType numbers are converted to c10 numbering; ExecuTorch-serde numbering
// (uint16 = 14, float8_e5m2 = 15, float8_e4m3fn = 16) is recognised because those
// numbers are unused in torch's table.
//
// Writes the current single-key form exactly as torch 2.9+ does: fields in
// schema.py declaration order, every field present (null where unset), Python
// json.dumps separators and float repr, ±inf as "Infinity"/"-Infinity". Fields
// introduced after the document's schema minor (guards_code at 8.15, Node.name
// at 8.17) are only written when set, so an 8.12 document re-serializes to the
// same bytes.
//
// Errors are exir::Error with the JSON pointer of the offending element as the
// location, e.g. "/graph_module/graph/nodes/12/inputs/1/arg: unknown Argument
// tag 'as_foo'".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <simdjson.h>

#include <string>
#include <string_view>

namespace exir {

class JsonWriter;

/// Which ScalarType table the document's dtype integers use.
enum class DtypeNumbering : uint8_t {
  Auto,            // torch serializer numbers; 14/15/16 read as ExecuTorch serde
  Torch,           // torch/_export/serde/schema.py only
  ExecuTorchSerde, // executorch exir/serde/schema.py
};

struct ExportJsonOptions {
  DtypeNumbering dtypeNumbering = DtypeNumbering::Auto;
  /// Check each node's metadata but keep none of it (stack_trace,
  /// nn_module_stack, ...): a reader that never looks at it (exir-emit without
  /// --emit-stacktraces) saves ~50 MB on a 100k-node program.
  bool skipNodeMetadata = false;
};

/// Schema version written for documents upgraded from a legacy (major < 8) form.
SchemaVersion currentSchemaVersion();

/// Parses one ExportedProgram JSON document. `file` only names it in errors.
ExportedProgram readExportedProgramJson(std::string_view json, const std::string &file = {},
                                        const ExportJsonOptions &options = {});
/// The same for a document already in simdjson's padded buffer (parsed in place, not copied).
ExportedProgram readExportedProgramJsonPadded(simdjson::padded_string json, const std::string &file = {},
                                              const ExportJsonOptions &options = {});
/// Reads and parses a file ("-" = stdin).
ExportedProgram readExportedProgramJsonFile(const std::string &path,
                                            const ExportJsonOptions &options = {});

/// Serializes in torch's current JSON form (one line, no trailing newline).
std::string writeExportedProgramJson(const ExportedProgram &program);
/// A size estimate of the written JSON, for reserving output buffers.
size_t estimateJsonSize(const ExportedProgram &program);
/// Same, as a value inside a larger document.
void writeExportedProgramJson(const ExportedProgram &program, JsonWriter &writer);

} // namespace exir
