# m_linear_clamp with a 3-D input [2, 3, 4]: linear then needs view_copy around addmm.
import json, sys
p = json.load(open(sys.argv[1]))
tv = p["graph_module"]["graph"]["tensor_values"]
def shape(name, sizes):
    strides, run = [], 1
    for s in reversed(sizes):
        strides.insert(0, run)
        run *= s
    tv[name]["sizes"] = [{"as_int": s} for s in sizes]
    tv[name]["strides"] = [{"as_int": s} for s in strides]
shape("x", [2, 3, 4])
shape("add", [2, 3, 4])
shape("linear", [2, 3, 5])
shape("clamp", [2, 3, 5])
json.dump(p, open(sys.argv[2], "w"))
