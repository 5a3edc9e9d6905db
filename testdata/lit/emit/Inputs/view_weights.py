"""view_weights.py IN.pt2 OUT.pt2 MODE: rewrites the m_linear_clamp archive so
that 'param' (f32[3, 4]) is a view into linear.weight's storage (weight_1,
20 floats) instead of its own weight_0, as torch.export writes shared storages:
  offset      rows at storage offset 8 (a slice: floats 8..19)
  transposed  strides (1, 3) at offset 0 (not dense: gathered)
Prints the 48 bytes the runtime must see for 'param', as hex."""
import json, struct, sys, zipfile

src, dst, mode = sys.argv[1:]
zin = zipfile.ZipFile(src)
config_name = next(n for n in zin.namelist() if n.endswith("model_weights_config.json"))
config = json.loads(zin.read(config_name))
weight_1 = zin.read(config_name.rsplit("/", 1)[0] + "/weight_1")
storage = struct.unpack("<20f", weight_1)
meta = config["config"]["param"]
meta["path_name"] = "weight_1"
if mode == "offset":
    meta["tensor_meta"]["storage_offset"] = {"as_int": 8}
    values = storage[8:20]
else:
    meta["tensor_meta"]["strides"] = [{"as_int": 1}, {"as_int": 3}]
    values = [storage[r + 3 * c] for r in range(3) for c in range(4)]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
    for info in zin.infolist():
        data = zin.read(info.filename)
        if info.filename == config_name:
            data = json.dumps(config).encode()
        zout.writestr(info, data)
print(struct.pack("<12f", *values).hex())
