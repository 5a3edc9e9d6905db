# nonzero.pt2 without its range constraints, plus neg(nonzero) whose rows are a
# fresh unbacked symbol u1 that nothing bounds.
import copy, json, sys, zipfile
p = json.loads(zipfile.ZipFile(sys.argv[1]).read("nonzero/models/model.json"))
p["range_constraints"] = {}
g = p["graph_module"]["graph"]
meta = copy.deepcopy(g["tensor_values"]["nonzero"])
meta["sizes"][0]["as_expr"]["expr_str"] = "Symbol('u1', integer=True)"
g["tensor_values"]["neg"] = meta
g["nodes"].insert(2, {"target": "torch.ops.aten.neg.default",
                      "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "nonzero"}}, "kind": 1}],
                      "outputs": [{"as_tensor": {"name": "neg"}}], "metadata": {}, "is_hop_single_tensor_return": None})
g["outputs"] = [{"as_tensor": {"name": "neg"}}]
p["graph_module"]["signature"]["output_specs"][0]["user_output"]["arg"]["as_tensor"]["name"] = "neg"
json.dump(p, open(sys.argv[2], "w"))
