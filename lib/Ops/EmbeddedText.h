//===- Ops/EmbeddedText.h - Data files compiled into ExirOps ----*- C++ -*-===//
//
// The operator table and the project's edge.yaml are turned into string
// literals at build time (EmbedText.cmake), so the tools work without the
// source tree. Private to lib/Ops.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string_view>

namespace exir::embedded {
/// Contents of lib/Ops/operators.txt.
std::string_view builtinOperatorsText();
/// Contents of edge_ops/edge.yaml.
std::string_view builtinEdgeYamlText();
} // namespace exir::embedded
