//===- tests/Plan/PlanRenderTest.cpp - SVG and Chrome trace output --------===//
//
// The pictures must contain every item with its hover text / event fields,
// escape names, and the trace must be valid JSON with the documented mapping.
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanRender.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace exir::plan;

namespace {

std::vector<PlanItem> sample() {
  std::vector<PlanItem> items(4);
  items[0] = {"x", 4, 0, 3, 1, -1};
  items[1] = {"y", 4, 0, 3, 1, -1};
  items[2] = {"out", 4, 2, 4, 1, -1};
  items[3] = {"cache<k&v>", 100, 0, 4, 2, -1};
  return items;
}

size_t count(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

} // namespace

TEST_CASE("SVG shows every item with hover text, per arena", "[plan][render]") {
  auto items = sample();
  Placement placement = planMemory(items, "greedy");
  std::string svg = renderSvg(items, placement, "add <forward>");
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("<title>x: 4 bytes, offset 32, live [0, 3]</title>") != std::string::npos);
  CHECK(svg.find("<title>y: 4 bytes, offset 16, live [0, 3]</title>") != std::string::npos);
  CHECK(svg.find("<title>out: 4 bytes, offset 0, live [2, 4]</title>") != std::string::npos);
  CHECK(svg.find("<title>cache&lt;k&amp;v&gt;: 100 bytes, offset 0, live [0, 4]</title>") !=
        std::string::npos);
  CHECK(svg.find("add &lt;forward&gt;") != std::string::npos);
  CHECK(svg.find("arena 1: 48 bytes, 3 items") != std::string::npos);
  CHECK(svg.find("arena 2: 112 bytes, 1 items") != std::string::npos);
  CHECK(count(svg, "<g class=\"arena\"") == 2);
  CHECK(count(svg, "</title></rect>") == items.size());
}

TEST_CASE("Chrome trace has one complete event per item", "[plan][render]") {
  auto items = sample();
  Placement placement = planMemory(items, "greedy");
  nlohmann::json trace = nlohmann::json::parse(renderChromeTrace(items, placement));
  REQUIRE(trace.contains("traceEvents"));
  size_t complete = 0;
  for (const auto &event : trace["traceEvents"]) {
    if (event["ph"] == "M") {
      CHECK(event["name"] == "process_name");
      continue;
    }
    REQUIRE(event["ph"] == "X");
    ++complete;
    std::string name = event["name"];
    auto it = std::find_if(items.begin(), items.end(),
                           [&](const PlanItem &item) { return item.name == name; });
    REQUIRE(it != items.end());
    size_t i = it - items.begin();
    CHECK(event["ts"] == it->start);
    CHECK(event["dur"] == it->end - it->start + 1);
    CHECK(event["pid"] == it->memId);
    CHECK(event["tid"] == placement.offsets[i]);
    CHECK(event["args"]["offset"] == placement.offsets[i]);
    CHECK(event["args"]["size"] == it->size);
  }
  CHECK(complete == items.size());
  CHECK(trace["otherData"]["algorithm"] == "greedy");
}

TEST_CASE("renderers reject a placement of another item list", "[plan][render]") {
  Placement placement;
  placement.offsets = {0};
  placement.arenaSizes = {0, 16};
  CHECK_THROWS_AS(renderSvg(sample(), placement, "t"), exir::Error);
  CHECK_THROWS_AS(renderChromeTrace(sample(), placement), exir::Error);
}
