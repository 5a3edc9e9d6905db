#!/usr/bin/env python3
"""Writes the malformed inputs of testdata/bad/formats.cases.

    python3 testdata/bad/gen_formats.py --bin build/bin

Valid files are made first (the seed models through the tools, in a temporary
directory); each malformed input is one small, deterministic change of a valid
file: truncation, a corrupted header field, a wrong type, a missing member.
Only the malformed files are written into testdata/bad (committed, so the
cases never depend on this script's run).
"""
import argparse
import io
import json
import os
import struct
import subprocess
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.dirname(HERE)


def write(rel, data):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def valid_files(bin_dir, tmp):
    def tool(name, *args):
        subprocess.run([os.path.join(bin_dir, name), *args], check=True)
    conv = os.path.join(TESTDATA, "models", "simple_conv.pt2")
    tool("exir-edge", conv, "-o", f"{tmp}/conv.edge.json")
    tool("exir-plan", f"{tmp}/conv.edge.json", "-o", f"{tmp}/conv.plan.json")
    tool("exir-emit", f"{tmp}/conv.plan.json", "-o", f"{tmp}/conv.pte")
    tool("exir-emit", f"{tmp}/conv.plan.json", "-o", f"{tmp}/ext.pte", "--external-constants")
    return {k: open(f"{tmp}/{n}", "rb").read() for k, n in
            [("pte", "conv.pte"), ("ext_pte", "ext.pte"), ("ptd", "ext.ptd")]}


def pte_cases(files):
    pte = files["pte"]
    for cut in (0, 3, 8, 16, 24, 40, len(pte) // 2, len(pte) - 1):
        write(f"pte/formats-truncated-{cut}.pte", pte[:cut])
    # The identifier at [4, 8).
    write("pte/formats-bad-identifier.pte", pte[:4] + b"XX99" + pte[8:])
    # The root offset at [0, 4) past the end of the file.
    write("pte/formats-root-past-end.pte", struct.pack("<I", len(pte) + 1000) + pte[4:])
    # The extended header "eh00" at [8, 32): length, program size, segment base, segment size.
    eh = pte.index(b"eh00")
    p = bytearray(pte)
    struct.pack_into("<Q", p, eh + 8, 1 << 40)  # program size beyond the file
    write("pte/formats-ext-header-program-size.pte", bytes(p))
    p = bytearray(pte)
    struct.pack_into("<Q", p, eh + 16, (1 << 63) - 1)  # segment base offset beyond the file
    write("pte/formats-ext-header-segment-base.pte", bytes(p))
    p = bytearray(pte)
    struct.pack_into("<Q", p, eh + 24, (1 << 64) - 1)  # segment data size: huge
    write("pte/formats-ext-header-segment-size.pte", bytes(p))
    p = bytearray(pte)
    struct.pack_into("<I", p, eh + 4, 3)  # header length smaller than its fields
    write("pte/formats-ext-header-length.pte", bytes(p))
    write("pte/formats-zeros.pte", b"\0" * 64)
    write("pte/formats-text.pte", "this is not a program\n")
    # A .pte that refers to a .ptd; the .ptd given is not one.
    write("pte/formats-external.pte", files["ext_pte"])


def ptd_cases(files):
    ptd = files["ptd"]
    for cut in (0, 7, 20, 48, 200, 383, len(ptd) - 1):
        write(f"ptd/formats-truncated-{cut}.ptd", ptd[:cut])
    write("ptd/formats-bad-identifier.ptd", ptd[:4] + b"FT99" + ptd[8:])
    fh = ptd.index(b"FH01")
    for name, offset, value in (("flatbuffer-offset", 8, 1 << 50), ("flatbuffer-size", 16, 1 << 62),
                                ("segment-base", 24, (1 << 63) + 5), ("segment-size", 32, 1 << 45)):
        p = bytearray(ptd)
        struct.pack_into("<Q", p, fh + offset, value)
        write(f"ptd/formats-header-{name}.ptd", bytes(p))
    p = bytearray(ptd)
    struct.pack_into("<I", p, fh + 4, 8)
    write("ptd/formats-header-length.ptd", bytes(p))


def safetensors(header, data=b"", length=None):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def safetensors_cases():
    w = {"dtype": "F32", "shape": [16, 3, 3, 3], "data_offsets": [0, 1728]}
    b = {"dtype": "F32", "shape": [16], "data_offsets": [1728, 1792]}
    data = bytes(1792)
    write("safetensors/formats-empty.safetensors", b"")
    write("safetensors/formats-short-length.safetensors", b"\x10\x00\x00")
    write("safetensors/formats-header-length-huge.safetensors",
          safetensors({"conv.weight": w}, data, length=1 << 62))
    write("safetensors/formats-header-not-json.safetensors", safetensors(b"{not json", data))
    write("safetensors/formats-header-array.safetensors", safetensors([1, 2], data))
    write("safetensors/formats-offsets-past-end.safetensors",
          safetensors({"conv.weight": dict(w, data_offsets=[0, 1 << 40]), "conv.bias": b}, data))
    write("safetensors/formats-offsets-reversed.safetensors",
          safetensors({"conv.weight": dict(w, data_offsets=[1728, 0]), "conv.bias": b}, data))
    write("safetensors/formats-size-mismatch.safetensors",
          safetensors({"conv.weight": dict(w, data_offsets=[0, 1000]), "conv.bias": b}, data))
    write("safetensors/formats-unknown-dtype.safetensors",
          safetensors({"conv.weight": dict(w, dtype="F33"), "conv.bias": b}, data))
    write("safetensors/formats-shape-not-list.safetensors",
          safetensors({"conv.weight": dict(w, shape="16x3"), "conv.bias": b}, data))
    write("safetensors/formats-negative-dim.safetensors",
          safetensors({"conv.weight": dict(w, shape=[-16, 3, 3, 3]), "conv.bias": b}, data))
    write("safetensors/formats-wrong-shape.safetensors",
          safetensors({"conv.weight": dict(w, shape=[8, 3, 3, 3], data_offsets=[0, 864]),
                       "conv.bias": b}, data))
    write("safetensors/formats-offsets-strings.safetensors",
          safetensors({"conv.weight": dict(w, data_offsets=["0", "1728"]), "conv.bias": b}, data))


def npy(descr, shape, payload, magic=b"\x93NUMPY", version=b"\x01\x00", fortran=False):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", repr(tuple(shape)))
    header = header.encode()
    header += b" " * (-(len(header) + 11) % 64) + b"\n"
    return magic + version + struct.pack("<H", len(header)) + header + payload


def npy_cases():
    # Inputs of testdata/ops/abs.pt2: one f32[2, 3, 4].
    good = bytes(2 * 3 * 4 * 4)
    write("npy/formats-bad-magic.npy", npy("<f4", (2, 3, 4), good, magic=b"\x93NUMPX"))
    write("npy/formats-truncated-header.npy", npy("<f4", (2, 3, 4), good)[:20])
    write("npy/formats-truncated-data.npy", npy("<f4", (2, 3, 4), good[:50]))
    write("npy/formats-wrong-shape.npy", npy("<f4", (4, 3, 2, 1), good))
    write("npy/formats-wrong-dtype.npy", npy("<i8", (2, 3, 4), good * 2))
    write("npy/formats-unknown-descr.npy", npy("<q9", (2, 3, 4), good))
    write("npy/formats-fortran.npy", npy("<f4", (2, 3, 4), good, fortran=True))
    write("npy/formats-version-9.npy", npy("<f4", (2, 3, 4), good, version=b"\x09\x00"))
    write("npy/formats-huge-shape.npy", npy("<f4", (1 << 40, 1 << 40), good))
    write("npy/formats-size-beyond-64-bits.npy", npy("<f4", (10 ** 30, 2), good))
    write("npy/formats-header-garbage.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': <<<<<\n" + good)


def yaml_cases():
    bad_edge_yaml = {
        "syntax": "- func: aten::add.Tensor\n  type_alias: {T0: [Float\n",
        "not-a-list": "func: aten::add.Tensor\n",
        "unknown-op": "- func: aten::no_such_op.default\n  namespace: edge\n  type_alias:\n    T0: [Float]\n"
                      "  type_constraint:\n  - {self: T0, __ret_0: T0}\n",
        "alias-not-list": "- func: aten::convolution.default\n  namespace: edge\n  type_alias:\n    T0: Float\n"
                          "  type_constraint:\n  - {input: T0, weight: T0, bias: T0, __ret_0: T0}\n",
        "unknown-dtype": "- func: aten::convolution.default\n  namespace: edge\n  type_alias:\n    T0: [Floaty]\n"
                         "  type_constraint:\n  - {input: T0, weight: T0, bias: T0, __ret_0: T0}\n",
        "unknown-alias": "- func: aten::convolution.default\n  namespace: edge\n  type_alias:\n    T0: [Float]\n"
                         "  type_constraint:\n  - {input: T7, weight: T0, bias: T0, __ret_0: T0}\n",
        "unknown-argument": "- func: aten::convolution.default\n  namespace: edge\n  type_alias:\n    T0: [Float]\n"
                            "  type_constraint:\n  - {nonsense: T0, __ret_0: T0}\n",
        "func-missing": "- namespace: edge\n  type_alias:\n    T0: [Float]\n",
        "constraint-not-map": "- func: aten::convolution.default\n  namespace: edge\n  type_alias:\n    T0: [Float]\n"
                              "  type_constraint:\n  - [T0, T0]\n",
        "binary": "\x00\x01\x02\xff\xfe",
    }
    for name, text in bad_edge_yaml.items():
        write(f"edge-yaml/formats-{name}.yaml", text)
    bad_specs = {
        "syntax": "backend_id: BackendWithCompilerDemo\nops: [aten::add.Tensor\n",
        "no-backend": "ops:\n- aten::add.Tensor\n",
        "unknown-backend": "backend_id: NoSuchBackend\nops:\n- aten::add.Tensor\n",
        "ops-not-list": "backend_id: BackendWithCompilerDemo\nops: aten::add.Tensor\n",
        "compile-spec-no-equals": "backend_id: BackendWithCompilerDemo\ncompile_specs: [max_value]\nops:\n- aten::add.Tensor\n",
        "not-a-map": "- backend_id\n- ops\n",
        "unknown-key": "backend_id: BackendWithCompilerDemo\nops:\n- aten::add.Tensor\nopz: 1\n",
    }
    for name, text in bad_specs.items():
        write(f"spec/formats-{name}.yaml", text)
    bad_decomps = {
        "syntax": "- match: aten::relu\n  steps: [\n",
        "not-a-list": "match: aten::relu\n",
        "unknown-key": "- match: aten::relu\n  replace:\n  - aten::clamp($self)\n",
        "unknown-match-op": "- match: aten::no_such_op\n  returns: [$self]\n",
        "unknown-call-op": "- match: aten::relu\n  steps:\n  - call: aten::no_such_op\n    args: {self: $self}\n"
                           "    out: [out]\n",
        "unknown-argument": "- match: aten::relu\n  steps:\n  - call: aten::clamp\n    args: {nonsense: $self}\n"
                            "    out: [out]\n",
        "bad-expression": "- match: aten::relu\n  when: ((($self.rank\n  returns: [$self]\n",
        "steps-not-list": "- match: aten::relu\n  steps: 3\n",
        "recursive": "- match: aten::relu\n  steps:\n  - call: aten::relu\n    args: {self: $self}\n    out: [out]\n",
    }
    for name, text in bad_decomps.items():
        write(f"rules/formats-decompositions-{name}.yaml", text)


def pt2_cases():
    src = os.path.join(TESTDATA, "models", "basic.pt2")
    members = {}
    with zipfile.ZipFile(src) as z:
        for info in z.infolist():
            members[info.filename] = z.read(info)

    def archive(changes, drop=()):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
            for name, data in members.items():
                if name in drop:
                    continue
                z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), changes.get(name, data))
        return buf.getvalue()

    whole = open(src, "rb").read()
    for cut in (0, 10, 30, len(whole) // 2, len(whole) - 10):
        write(f"pt2/formats-truncated-{cut}.pt2", whole[:cut])
    # A weights member whose path leaves the archive's data folder.
    write("pt2/formats-no-model.pt2", archive({}, drop=("basic/models/model.json",)))
    write("pt2/formats-model-not-json.pt2", archive({"basic/models/model.json": b"{\"graph_module\": ["}))
    write("pt2/formats-model-array.pt2", archive({"basic/models/model.json": b"[]"}))
    write("pt2/formats-byteorder.pt2", archive({"basic/byteorder": b"big"}))
    write("pt2/formats-empty-zip.pt2", archive({}, drop=tuple(members)))
    meta = {"dtype": 7, "sizes": [{"as_int": 1}], "requires_grad": False,
            "device": {"type": "cpu", "index": None}, "strides": [{"as_int": 1}],
            "storage_offset": {"as_int": 0}, "layout": 7}
    weights_config = json.dumps({"config": {"w": {"path_name": "../../../etc/passwd", "is_param": True,
                                                    "use_pickle": False, "tensor_meta": meta}}})
    write("pt2/formats-weights-config-escape.pt2",
          archive({"basic/data/weights/model_weights_config.json": weights_config.encode()}))
    write("pt2/formats-weights-config-array.pt2",
          archive({"basic/data/weights/model_weights_config.json": b"[1]"}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = valid_files(os.path.abspath(args.bin), tmp)
        pte_cases(files)
        ptd_cases(files)
    safetensors_cases()
    npy_cases()
    yaml_cases()
    pt2_cases()


if __name__ == "__main__":
    main()
