"""Writes a safetensors file: python3 write_safetensors.py OUT NAME:DTYPE:D0xD1:FIRST ...

Each tensor holds FIRST, FIRST+1, ... (row-major, little-endian). DTYPE is F32 or F16.
"""
import json
import struct
import sys

FORMATS = {"F32": ("<f", 4), "F16": ("<e", 2)}

out, specs = sys.argv[1], sys.argv[2:]
header, data = {}, b""
for spec in specs:
    name, dtype, shape, first = spec.split(":")
    dims = [int(d) for d in shape.split("x")] if shape else []
    count = 1
    for d in dims:
        count *= d
    fmt, size = FORMATS[dtype]
    payload = b"".join(struct.pack(fmt, float(first) + i) for i in range(count))
    header[name] = {"dtype": dtype, "shape": dims, "data_offsets": [len(data), len(data) + len(payload)]}
    data += payload
header["__metadata__"] = {"format": "pt"}
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data)
