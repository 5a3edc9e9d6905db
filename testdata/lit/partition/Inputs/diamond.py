# Turns basic (x + y) into a diamond whose supported adds cannot all fuse:
#   a = x + y;  b = a * y;  c = a + y;  d = b + c;  return d
# Fusing every add into one delegate would put the mul outside a partition that
# both feeds it (a) and consumes it (d): a dependency cycle.
import copy, json, sys
p = json.load(open(sys.argv[1]))
g = p["graph_module"]["graph"]
add = g["nodes"][0]
meta = g["tensor_values"]["add"]
def node(op, out, lhs, rhs):
    n = copy.deepcopy(add)
    n["target"] = "torch.ops.aten." + op + ".Tensor"
    n["inputs"][0]["arg"] = {"as_tensor": {"name": lhs}}
    n["inputs"][1]["arg"] = {"as_tensor": {"name": rhs}}
    n["outputs"] = [{"as_tensor": {"name": out}}]
    n["metadata"].pop("torch_fn", None)
    return n
g["nodes"] = [node("add", "a", "x", "y"), node("mul", "b", "a", "y"),
              node("add", "c", "a", "y"), node("add", "d", "b", "c")]
g["tensor_values"] = {k: v for k, v in g["tensor_values"].items() if k != "add"}
for name in "abcd":
    g["tensor_values"][name] = copy.deepcopy(meta)
g["outputs"] = [{"as_tensor": {"name": "d"}}]
p["graph_module"]["signature"]["output_specs"] = [{"user_output": {"arg": {"as_tensor": {"name": "d"}}}}]
json.dump(p, open(sys.argv[2], "w"))
