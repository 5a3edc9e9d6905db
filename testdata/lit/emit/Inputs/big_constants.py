"""Helpers for the >4 GB constant tests: the weights live in a sparse file, so
nothing here (or in the tools) writes or reads gigabytes of real data.

  big_constants.py make PLAN_IN PLAN_OUT DATA     add parameters big.a (3 GiB) and
      big.b (2 GiB) to a planned program, as references into the sparse file DATA,
      whose only non-zero bytes are big.a's first float (1.0) and big.b's last (2.0)
  big_constants.py check-pte PTE HEAD_JSON   check the .pte against its flatbuffer
      (decoded by flatc into HEAD_JSON): 64-bit offsets, the sentinels in place
  big_constants.py make-dense PLAN_IN PLAN_OUT DATA MIB   the same with MIB MiB of
      real (non-zero) bytes, so that a copy takes time even when holes are skipped
  big_constants.py head PTE OUT              write the .pte's flatbuffer part to OUT
  big_constants.py check-ptd PTD             the sentinels in the .ptd (layout from exir-inspect on stdin)
"""
import json, os, re, struct, sys

GIB = 1 << 30
SIZES = {"big.a": 3 * GIB, "big.b": 2 * GIB}


def make_dense(plan_in, plan_out, data, mib):
    total = int(mib) << 20
    SIZES["big.a"] = total // 5 * 3 // 4 * 4
    SIZES["big.b"] = total - SIZES["big.a"]
    pattern = bytes(range(1, 256)) * 4112  # ~1 MiB, no zero byte
    with open(data, "wb") as f:
        left = total
        while left:
            chunk = pattern[:min(left, len(pattern))]
            f.write(chunk)
            left -= len(chunk)
    write_plan(plan_in, plan_out, data)


def make(plan_in, plan_out, data):
    with open(data, "wb") as f:
        f.truncate(SIZES["big.a"] + SIZES["big.b"])
        f.seek(0)
        f.write(struct.pack("<f", 1.0))
        f.seek(SIZES["big.a"] + SIZES["big.b"] - 4)
        f.write(struct.pack("<f", 2.0))
    write_plan(plan_in, plan_out, data)


def write_plan(plan_in, plan_out, data):
    p = json.load(open(plan_in))
    gm = p["methods"]["forward"]["graph_module"]
    offset = 0
    for fqn in ["big.b", "big.a"]:  # inserted at the front: big.a first
        name = "p_" + fqn.replace(".", "_")
        numel = SIZES[fqn] // 4
        gm["signature"]["input_specs"].insert(0, {"parameter": {"arg": {"name": name}, "parameter_name": fqn}})
        gm["graph"]["inputs"].insert(0, {"as_tensor": {"name": name}})
        gm["graph"]["tensor_values"][name] = {
            "dtype": 7, "sizes": [{"as_int": numel}], "requires_grad": True,
            "device": {"type": "cpu", "index": None}, "strides": [{"as_int": 1}],
            "storage_offset": {"as_int": 0}, "layout": 7}
    for fqn in ["big.a", "big.b"]:
        p["constants"][fqn] = {
            "dtype": 7, "sizes": [SIZES[fqn] // 4], "strides": [1], "storage_offset": 0,
            "data": {"file": os.path.abspath(data), "offset": offset, "length": SIZES[fqn],
                     "file_size": SIZES["big.a"] + SIZES["big.b"]}}
        offset += SIZES[fqn]
    json.dump(p, open(plan_out, "w"))


def read_at(path, offset, n):
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(n)


def head(pte, out):
    program_size = struct.unpack("<Q", read_at(pte, 16, 8))[0]
    open(out, "wb").write(read_at(pte, 0, program_size))


def check_pte(pte, head_json):
    assert read_at(pte, 8, 4) == b"eh00", "no extended header"
    base, data_size = struct.unpack("<QQ", read_at(pte, 24, 16))
    size = os.path.getsize(pte)
    assert size == base + data_size, (size, base, data_size)
    assert data_size > 4 * GIB, data_size
    program = json.load(open(head_json))
    seg = program["segments"][program["constant_segment"]["segment_index"]]
    offsets = [int(o) for o in program["constant_segment"]["offsets"]]
    values = program["execution_plan"][0]["values"]
    a, b = values[0]["val"], values[1]["val"]
    assert a["sizes"] == [SIZES["big.a"] // 4] and b["sizes"] == [SIZES["big.b"] // 4]
    start_a = base + int(seg["offset"]) + offsets[a["data_buffer_idx"]]
    start_b = base + int(seg["offset"]) + offsets[b["data_buffer_idx"]]
    assert offsets[b["data_buffer_idx"]] >= 3 * GIB, "big.b's offset does not need 64 bits"
    assert read_at(pte, start_a, 4) == struct.pack("<f", 1.0), "big.a's first float"
    assert read_at(pte, start_b + SIZES["big.b"] - 4, 4) == struct.pack("<f", 2.0), "big.b's last float"
    allocated = os.stat(pte).st_blocks * 512
    assert allocated < 64 << 20, "output is not sparse: %d bytes allocated" % allocated
    print("pte ok: %d bytes, segment data %d, big.b at %d, %d bytes allocated" %
          (size, data_size, offsets[b["data_buffer_idx"]], allocated))


def check_ptd(ptd):
    listing = sys.stdin.read()
    base = int(re.search(r"segment_base_offset (\d+)", listing).group(1))
    segments = [(int(o), int(s)) for o, s in re.findall(r"\[\d+\] offset (\d+), size (\d+)", listing)]
    keys = dict(re.findall(r"^  (\S+): segment (\d+)", listing, re.M))
    a, b = segments[int(keys["big.a"])], segments[int(keys["big.b"])]
    assert read_at(ptd, base + a[0], 4) == struct.pack("<f", 1.0), "big.a's first float"
    assert read_at(ptd, base + b[0] + b[1] - 4, 4) == struct.pack("<f", 2.0), "big.b's last float"
    allocated = os.stat(ptd).st_blocks * 512
    assert allocated < 64 << 20, "output is not sparse: %d bytes allocated" % allocated
    print("ptd ok: big.b at %d, %d bytes allocated" % (b[0], allocated))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"make": make, "make-dense": make_dense, "head": head, "check-pte": check_pte, "check-ptd": check_ptd}[cmd](*args)
