# Drops input y from the basic model, leaving forward(x) = x + 1.0.
import json, sys
p = json.load(open(sys.argv[1]))
g = p["graph_module"]["graph"]
g["inputs"] = [a for a in g["inputs"] if a["as_tensor"]["name"] != "y"]
del g["tensor_values"]["y"]
sig = p["graph_module"]["signature"]
sig["input_specs"] = [s for s in sig["input_specs"] if s["user_input"]["arg"]["as_tensor"]["name"] != "y"]
for e in p["graph_module"]["module_call_graph"]:
    if e["signature"]:
        e["signature"]["in_spec"] = e["signature"]["in_spec"].replace(
            '{"type": null, "context": null, "children_spec": []}, {"type": null, "context": null, "children_spec": []}',
            '{"type": null, "context": null, "children_spec": []}')
        e["signature"]["forward_arg_names"] = ["x"]
json.dump(p, open(sys.argv[2], "w"))
