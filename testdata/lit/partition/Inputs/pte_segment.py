# Prints the bytes of one segment of a .pte as a Python bytes literal.
# Usage: pte_segment.py FILE.pte OFFSET SIZE  (OFFSET/SIZE as exir-inspect lists
# them under "segments:", relative to the extended header's segment_base_offset).
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[4:8] == b"ET12" and data[8:12] == b"eh00", "not a .pte with an extended header"
base = struct.unpack_from("<Q", data, 24)[0]
offset, size = int(sys.argv[2]), int(sys.argv[3])
print(data[base + offset:base + offset + size])
