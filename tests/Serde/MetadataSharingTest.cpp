//===- tests/Serde/MetadataSharingTest.cpp - Metadata read shared ---------===//
//
// The reader gives equal node metadata values (and keys) one SharedString
// record: that is what keeps a real export's repeated stack traces small.
//
//===----------------------------------------------------------------------===//
#include "IR/IR.h"
#include "Serde/ExportJson.h"

#include <catch2/catch.hpp>

#include <string>

using namespace exir;

TEST_CASE("reading a program gives equal metadata values one record", "[metadata][serde]") {
  auto node = [](int i) {
    return R"({"target": "torch.ops.aten.relu.default", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": ")" +
           std::string(i ? "r" + std::to_string(i - 1) : "x") +
           R"("}}, "kind": 1}], "outputs": [{"as_tensor": {"name": "r)" + std::to_string(i) +
           R"J("}}], "metadata": {"stack_trace": "File \"/m.py\", line 3, in forward\n    return F.relu(x)", )J"
           R"("torch_fn": "relu_)" + std::to_string(i) + R"(;function.relu"}, "is_hop_single_tensor_return": null})";
  };
  std::string meta = R"({"dtype": 7, "sizes": [{"as_int": 2}], "requires_grad": false, "device": {"type": "cpu", )"
                     R"("index": null}, "strides": [{"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7})";
  std::string text = R"({"graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "x"}}], "outputs": )"
                     R"([{"as_tensor": {"name": "r2"}}], "nodes": [)" +
                     node(0) + ", " + node(1) + ", " + node(2) + R"(], "tensor_values": {"x": )" + meta +
                     R"(, "r0": )" + meta + R"(, "r1": )" + meta + R"(, "r2": )" + meta +
                     R"(}, "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": false}, )"
                     R"("signature": {"input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}], )"
                     R"("output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "r2"}}}}]}, )"
                     R"("module_call_graph": []}, "opset_version": {"aten": 10}, "range_constraints": {}, )"
                     R"("schema_version": {"major": 8, "minor": 14}, "verifiers": ["ATEN"], "torch_version": "2.9.0"})";
  ExportedProgram ep = readExportedProgramJson(text, "m.json");
  const auto &nodes = ep.graph.nodes;
  REQUIRE(nodes.size() == 3);
  const SharedString *trace0 = nodes[0].metadata.find("stack_trace");
  REQUIRE(trace0);
  CHECK(*trace0 == "File \"/m.py\", line 3, in forward\n    return F.relu(x)");
  for (size_t i = 1; i < 3; ++i) {
    CHECK(nodes[i].metadata.find("stack_trace")->sharesRecordWith(*trace0));
    CHECK(nodes[i].metadata.begin()->first.sharesRecordWith(nodes[0].metadata.begin()->first)); // the key too
    CHECK(*nodes[i].metadata.find("torch_fn") == "relu_" + std::to_string(i) + ";function.relu");
  }
}
