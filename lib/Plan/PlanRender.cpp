//===- Plan/PlanRender.cpp - Pictures of a placement ----------------------===//
//
// Plain string building for the SVG (no DOM needed) and nlohmann::json for
// the trace, so names with quotes or angle brackets come out well formed.
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanRender.h"

#include "Support/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

namespace exir::plan {

namespace {

std::string escapeXml(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string fmt(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

void checkShape(const std::vector<PlanItem> &items, const Placement &placement) {
  if (placement.offsets.size() != items.size())
    throw Error("placement has " + std::to_string(placement.offsets.size()) + " offsets for " +
                std::to_string(items.size()) + " items");
}

} // namespace

std::string renderSvg(const std::vector<PlanItem> &items, const Placement &placement,
                      const std::string &title) {
  checkShape(items, placement);
  // Arenas that hold items, each with its own address scale.
  std::map<uint32_t, std::vector<size_t>> arenas;
  uint32_t lastNode = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    arenas[items[i].memId].push_back(i);
    lastNode = std::max(lastNode, items[i].end);
  }
  const double left = 90, plotWidth = 960, plotHeight = 320, panelGap = 70, top = 50;
  const double nodes = double(lastNode) + 1;
  double height = top + std::max<size_t>(arenas.size(), 1) * (plotHeight + panelGap);
  std::string svg;
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt(left + plotWidth + 30) +
         "\" height=\"" + fmt(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg += "<title>" + escapeXml(title) + "</title>\n";
  svg += "<text x=\"" + fmt(left) + "\" y=\"24\" font-size=\"16\">" + escapeXml(title) +
         "</text>\n";
  double panelTop = top;
  for (const auto &[memId, members] : arenas) {
    uint64_t arenaSize = memId < placement.arenaSizes.size() ? placement.arenaSizes[memId] : 0;
    uint64_t scale = arenaSize;
    for (size_t i : members)
      scale = std::max(scale, placement.offsets[i] + items[i].size);
    scale = std::max<uint64_t>(scale, 1);
    auto x = [&](double node) { return left + node / nodes * plotWidth; };
    auto y = [&](double address) { return panelTop + plotHeight - address / scale * plotHeight; };
    svg += "<g class=\"arena\" id=\"arena" + std::to_string(memId) + "\">\n";
    svg += "<text x=\"" + fmt(left) + "\" y=\"" + fmt(panelTop - 8) + "\" font-size=\"13\">arena " +
           std::to_string(memId) + ": " + std::to_string(arenaSize) + " bytes, " +
           std::to_string(members.size()) + " items</text>\n";
    svg += "<rect x=\"" + fmt(left) + "\" y=\"" + fmt(panelTop) + "\" width=\"" + fmt(plotWidth) +
           "\" height=\"" + fmt(plotHeight) + "\" fill=\"#f8f8f8\" stroke=\"#888\"/>\n";
    // Axis ticks: five on each axis.
    for (int k = 0; k <= 4; ++k) {
      double node = nodes * k / 4, address = double(scale) * k / 4;
      svg += "<text x=\"" + fmt(x(node)) + "\" y=\"" + fmt(panelTop + plotHeight + 14) +
             "\" text-anchor=\"middle\">" + std::to_string(uint64_t(node)) + "</text>\n";
      svg += "<text x=\"" + fmt(left - 6) + "\" y=\"" + fmt(y(address) + 4) +
             "\" text-anchor=\"end\">" + std::to_string(uint64_t(address)) + "</text>\n";
    }
    svg += "<text x=\"" + fmt(left + plotWidth / 2) + "\" y=\"" +
           fmt(panelTop + plotHeight + 30) + "\" text-anchor=\"middle\">node index</text>\n";
    for (size_t i : members) {
      const PlanItem &item = items[i];
      uint64_t offset = placement.offsets[i];
      double x0 = x(item.start), x1 = x(double(item.end) + 1);
      double y0 = y(double(offset + item.size)), y1 = y(double(offset));
      double h = std::max(y1 - y0, 0.5);
      unsigned hue = unsigned((i * 137) % 360); // golden-angle steps keep neighbours apart
      svg += "<rect x=\"" + fmt(x0) + "\" y=\"" + fmt(y0) + "\" width=\"" +
             fmt(std::max(x1 - x0, 0.5)) + "\" height=\"" + fmt(h) + "\" fill=\"hsl(" +
             std::to_string(hue) + ",60%,65%)\" stroke=\"#333\" stroke-width=\"0.3\"><title>" +
             escapeXml(item.name) + ": " + std::to_string(item.size) + " bytes, offset " +
             std::to_string(offset) + ", live [" + std::to_string(item.start) + ", " +
             std::to_string(item.end) + "]</title></rect>\n";
    }
    svg += "</g>\n";
    panelTop += plotHeight + panelGap;
  }
  svg += "</svg>\n";
  return svg;
}

std::string renderChromeTrace(const std::vector<PlanItem> &items, const Placement &placement) {
  checkShape(items, placement);
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  std::map<uint32_t, bool> arenas;
  for (const PlanItem &item : items)
    arenas[item.memId] = true;
  for (const auto &[memId, unused] : arenas) {
    (void)unused;
    uint64_t size = memId < placement.arenaSizes.size() ? placement.arenaSizes[memId] : 0;
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", memId},
                      {"args", {{"name", "arena " + std::to_string(memId) + " (" +
                                             std::to_string(size) + " bytes)"}}}});
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const PlanItem &item = items[i];
    uint64_t offset = placement.offsets[i];
    events.push_back({{"name", item.name},
                      {"cat", "tensor"},
                      {"ph", "X"},
                      {"ts", item.start},
                      {"dur", uint64_t(item.end) - item.start + 1},
                      {"pid", item.memId},
                      {"tid", offset},
                      {"args",
                       {{"offset", offset},
                        {"size", item.size},
                        {"start", item.start},
                        {"end", item.end}}}});
  }
  nlohmann::ordered_json trace;
  trace["traceEvents"] = std::move(events);
  trace["displayTimeUnit"] = "ns";
  trace["otherData"] = {{"algorithm", placement.algorithm},
                        {"timeUnit", "1 trace microsecond = 1 node"}};
  return trace.dump(1) + "\n";
}

} // namespace exir::plan
