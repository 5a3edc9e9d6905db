"""Prints '[i] N bytes sha256 H' for every constant of a .pte, from the file's
own bytes: segment_base_offset from the eh00 header, the constant segment's
offset and the tensor offsets and sizes from exir-inspect's listing (argv[2]).
An independent check of what `exir-inspect --hash` prints."""
import hashlib
import re
import struct
import sys

data = open(sys.argv[1], "rb").read()
listing = open(sys.argv[2]).read()
assert data[8:12] == b"eh00", "no extended header"
base = struct.unpack_from("<Q", data, 24)[0]
segments = [int(m.group(1)) for m in re.finditer(r"^  \[\d+\] offset (\d+) size \d+$", listing, re.M)]
m = re.search(r"^constant_segment: segment (\d+), offsets \[([0-9, ]*)\]$", listing, re.M)
segment, offsets = int(m.group(1)), [int(x) for x in m.group(2).split(", ")]
sizes = [int(s) for s in re.findall(r"^  \[\d+\] (\d+) bytes", listing.split("\nconstants: ")[1], re.M)]
for i, size in enumerate(sizes, start=1):
    start = base + segments[segment] + offsets[i]
    print(f"  [{i}] {size} bytes sha256 {hashlib.sha256(data[start:start + size]).hexdigest()}")
