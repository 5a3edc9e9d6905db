//===- Ops/EmbeddedText.h - Data files compiled into ExirOps ----*- C++ -*-===//
//
// The operator table is turned into a string literal at build time
// (EmbedText.cmake), so the tools work without the source tree; edge.yaml is
// compiled into data instead (Ops/CompiledTables.h). Private to lib/Ops.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string_view>

namespace exir::embedded {
/// Contents of lib/Ops/operators.txt.
std::string_view builtinOperatorsText();
} // namespace exir::embedded
