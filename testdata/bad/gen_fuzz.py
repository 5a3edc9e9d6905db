#!/usr/bin/env python3
"""Makes the fuzz-*.pt2 inputs of fuzz.cases that were written by hand rather
than found by a fuzz target (those are committed as libFuzzer saved them).

pt2/fuzz-deflated-size-4g.pt2: testdata/models/basic.pt2 with its model JSON
deflated and its declared (uncompressed) size forged to 0xfffff000 in both the
local header and the central directory, the compressed form of the finding
FuzzPt2 made with a stored member (fuzz-stored-size-4g.pt2).

pickle/fuzz-*.etrecord: ../shared's ETRecord with the data.pkl of its edge
program's state dict replaced by a pickle of FuzzPickle's (pickle/fuzz-*.pkl, as
the fuzzer saved it or written here), which is how a tool reads a pickle.
"""
import io
import pathlib
import struct
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def forged_deflated(out):
    src = zipfile.ZipFile(ROOT / 'testdata/models/basic.pt2')
    with zipfile.ZipFile(out, 'w') as z:
        for info in src.infolist():
            deflate = info.filename.endswith('models/model.json')
            z.writestr(zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0)), src.read(info),
                       compress_type=zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED)
    data = bytearray(out.read_bytes())
    name = b'basic/models/model.json'
    forged = struct.pack('<I', 0xfffff000)
    # Local header: signature, then the uncompressed size at offset 22.
    local = data.index(b'PK\x03\x04')
    while True:
        if data[local + 30:local + 30 + len(name)] == name:
            data[local + 22:local + 26] = forged
            break
        local = data.index(b'PK\x03\x04', local + 4)
    # Central directory entry: the uncompressed size at offset 24.
    central = data.index(b'PK\x01\x02')
    while data[central + 46:central + 46 + len(name)] != name:
        central = data.index(b'PK\x01\x02', central + 4)
    data[central + 24:central + 28] = forged
    out.write_bytes(bytes(data))


def etrecord_with_pickle(pickle, out):
    src = zipfile.ZipFile(ROOT.parent / 'shared/corpus/pt2/executorch_etrecord.bin')
    with zipfile.ZipFile(out, 'w') as z:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == 'edge_dialect_exported_program_state_dict':
                inner_src = zipfile.ZipFile(io.BytesIO(data))
                buffer = io.BytesIO()
                with zipfile.ZipFile(buffer, 'w') as inner:
                    for member in inner_src.infolist():
                        content = pickle if member.filename.endswith('data.pkl') else inner_src.read(member)
                        inner.writestr(zipfile.ZipInfo(member.filename, date_time=(1980, 1, 1, 0, 0, 0)), content)
                data = buffer.getvalue()
            z.writestr(zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0)), data)


if __name__ == '__main__':
    forged_deflated(HERE / 'pt2/fuzz-deflated-size-4g.pt2')
    # A list that holds itself as the pickle's result: collect() recursed forever.
    (HERE / 'pickle/fuzz-self-list.pkl').write_bytes(b'\x80\x02]q\x00h\x00a.')
    for name in ('fuzz-self-list', 'fuzz-leak-cycle'):
        etrecord_with_pickle((HERE / f'pickle/{name}.pkl').read_bytes(), HERE / f'pickle/{name}.etrecord')
