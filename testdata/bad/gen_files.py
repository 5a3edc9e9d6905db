#!/usr/bin/env python3
"""Writes the pt2/files-*.pt2 inputs of files.cases from the seed model
testdata/models/m_linear_clamp.pt2 (run from anywhere; rewrites them in place):

  files-weight-bad-crc.pt2     a STORED weight member with one byte flipped (its CRC-32 no longer matches)
  files-json-bad-crc.pt2       the same for models/model.json
  files-stored-size-lie.pt2    a STORED member whose sizes disagree (declares more than it stores)
  files-deflate-size-lie.pt2   a deflated model.json declaring 3 GiB from a few KB (past deflate's 1032:1)

`gen_files.py bomb OUT.pt2` writes a real zip bomb instead (600 MiB of spaces
as models/model.json, ~600 KB deflated): too big to commit, so the case makes it.
"""
import os
import struct
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = os.path.join(HERE, "..", "models", "m_linear_clamp.pt2")
ROOT = "m_linear_clamp/"


def data_offset(data, info):
    h = info.header_offset
    name_len, extra_len = struct.unpack("<HH", data[h + 26:h + 30])
    return h + 30 + name_len + extra_len


def flip_byte(member, out):
    data = bytearray(open(SEED, "rb").read())
    info = zipfile.ZipFile(SEED).getinfo(ROOT + member)
    data[data_offset(data, info) + info.file_size // 2] ^= 0x01
    open(out, "wb").write(data)


def patch_sizes(data, info, compressed=None, uncompressed=None):
    """Rewrites a member's sizes in its local header and central directory entry."""
    h = info.header_offset
    name = info.filename.encode()
    pos = 0
    while True:
        pos = data.index(b"PK\x01\x02", pos)
        name_len = struct.unpack("<H", data[pos + 28:pos + 30])[0]
        if data[pos + 46:pos + 46 + name_len] == name:
            break
        pos += 4
    for base, csize_at, usize_at in ((h, 18, 22), (pos, 20, 24)):
        if compressed is not None:
            data[base + csize_at:base + csize_at + 4] = struct.pack("<I", compressed)
        if uncompressed is not None:
            data[base + usize_at:base + usize_at + 4] = struct.pack("<I", uncompressed)


def stored_size_lie(out):
    data = bytearray(open(SEED, "rb").read())
    info = zipfile.ZipFile(SEED).getinfo(ROOT + "models/model.json")
    patch_sizes(data, info, uncompressed=info.file_size + 4096)
    open(out, "wb").write(data)


def deflate_size_lie(out):
    src = zipfile.ZipFile(SEED)
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            method = zipfile.ZIP_DEFLATED if info.filename.endswith("models/model.json") else zipfile.ZIP_STORED
            z.writestr(info.filename, src.read(info.filename), compress_type=method)
    data = bytearray(open(out, "rb").read())
    info = zipfile.ZipFile(out).getinfo(ROOT + "models/model.json")
    patch_sizes(data, info, uncompressed=3 << 30)
    open(out, "wb").write(data)


def bomb(out):
    # Streamed at deflate level 1: the case's time bound covers making the bomb,
    # and level 6 on 600 MB took most of it on a loaded machine (ratio ~230:1,
    # inside deflate's bound, so only the memory limit stops the tool).
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("m/archive_format", "pt2")
        with z.open("m/models/model.json", "w") as f:
            chunk = b" " * (8 << 20)
            for _ in range(75):
                f.write(chunk)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "bomb":
        bomb(sys.argv[2])
        return
    out = os.path.join(HERE, "pt2")
    os.makedirs(out, exist_ok=True)
    flip_byte("data/weights/weight_0", os.path.join(out, "files-weight-bad-crc.pt2"))
    flip_byte("models/model.json", os.path.join(out, "files-json-bad-crc.pt2"))
    stored_size_lie(os.path.join(out, "files-stored-size-lie.pt2"))
    deflate_size_lie(os.path.join(out, "files-deflate-size-lie.pt2"))


if __name__ == "__main__":
    main()
