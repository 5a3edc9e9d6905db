# Turns basic (x + y) into a stateful module: y becomes buffer `state`, updated to x + state.
import json, sys
p = json.load(open(sys.argv[1]))
gm = p["graph_module"]
g = gm["graph"]
rename = lambda a: {"as_tensor": {"name": "b_state"}} if a.get("as_tensor", {}).get("name") == "y" else a
g["inputs"] = [{"as_tensor": {"name": "b_state"}}] + [a for a in g["inputs"] if a["as_tensor"]["name"] != "y"]
g["tensor_values"] = {("b_state" if k == "y" else k): v for k, v in g["tensor_values"].items()}
for n in g["nodes"]:
    for i in n["inputs"]:
        i["arg"] = rename(i["arg"])
g["outputs"] = [{"as_tensor": {"name": "add"}}, {"as_tensor": {"name": "add"}}]
sig = gm["signature"]
sig["input_specs"] = [{"buffer": {"arg": {"name": "b_state"}, "buffer_name": "state", "persistent": True}}] + \
    [s for s in sig["input_specs"] if s["user_input"]["arg"]["as_tensor"]["name"] != "y"]
sig["output_specs"] = [{"buffer_mutation": {"arg": {"name": "add"}, "buffer_name": "state"}},
                       {"user_output": {"arg": {"as_tensor": {"name": "add"}}}}]
json.dump(p, open(sys.argv[2], "w"))
