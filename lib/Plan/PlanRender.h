//===- Plan/PlanRender.h - Pictures of a placement --------------*- C++ -*-===//
//
// Two views of a placement for humans: an SVG drawing (one panel per arena,
// node index on the x axis, byte address on the y axis, one rectangle per
// item with hover text) and a Chrome trace-event JSON file for
// chrome://tracing or https://ui.perfetto.dev.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Plan/Placement.h"

#include <string>

namespace exir::plan {

/// A standalone SVG document. Per arena, a panel titled with its size: x =
/// node index (an item spans [start, end + 1)), y = address with 0 at the
/// bottom (an item spans [offset, offset + size)). Each rectangle carries a
/// <title> "name: size bytes, offset O, live [start, end]" shown on hover.
std::string renderSvg(const std::vector<PlanItem> &items, const Placement &placement,
                      const std::string &title);

/// Chrome trace-event JSON ({"traceEvents": [...]}). Mapping:
///   one complete event ("ph":"X") per item, "name" = item name,
///   "ts" = start node, "dur" = end - start + 1 (one node = 1 trace µs),
///   "pid" = memId (named "arena <id> (<size> bytes)" by a metadata event),
///   "tid" = offset, so each track is one address and the tracks, sorted by
///   tid, read as a memory map over time,
///   "args" = {"offset", "size", "start", "end"}.
std::string renderChromeTrace(const std::vector<PlanItem> &items, const Placement &placement);

} // namespace exir::plan
