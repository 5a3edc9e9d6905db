#!/usr/bin/env python3
"""Seed corpora for the fuzz targets (see fuzz/README.md).

Writes OUT/<Target>/ for every target from the project's test data, the
reference corpus in ../shared, and, when the tools are given (--tools DIR),
artifacts of every stage and emitted .pte/.ptd files made from the seed models.
Seeds larger than a target's size limit are left out (they would only slow the
fuzzer down); large YAML files are cut into entries instead.
"""
import argparse
import hashlib
import io
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Largest seed per target; run.sh passes the same numbers as -max_len.
MAX_LEN = {
    'FuzzExportJson': 65536, 'FuzzProgramJson': 65536, 'FuzzPt2': 262144, 'FuzzPickle': 16384,
    'FuzzEdgeYaml': 8192, 'FuzzRewriteRules': 16384, 'FuzzPte': 262144,
}


class Seeds:
    def __init__(self, out):
        self.out = pathlib.Path(out)
        self.count = {t: 0 for t in MAX_LEN}

    def add(self, target, data):
        if not data or len(data) > MAX_LEN[target]:
            return
        d = self.out / target
        d.mkdir(parents=True, exist_ok=True)
        (d / hashlib.sha1(data).hexdigest()).write_bytes(data)
        self.count[target] += 1


def zip_members(data, depth=0):
    """(name, bytes) of every member, recursing into nested zips (torch.save)."""
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return
    for info in z.infolist():
        try:
            member = z.read(info)
        except Exception:
            continue
        yield info.filename, member
        if depth < 2 and member[:4] == b'PK\x03\x04':
            yield from zip_members(member, depth + 1)


def yaml_entries(text, per_seed=3):
    """A top-level YAML list cut into seeds of `per_seed` entries each."""
    entries, current = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith('- ') and current:
            entries.append(''.join(current))
            current = []
        if line.startswith('#') and not current:
            continue
        current.append(line)
    if current:
        entries.append(''.join(current))
    for i in range(0, len(entries), per_seed):
        yield ''.join(entries[i:i + per_seed]).encode()


def archive_seeds(seeds, path):
    data = path.read_bytes()
    seeds.add('FuzzPt2', data)
    for name, member in zip_members(data):
        if name.endswith('.json') and member.lstrip()[:1] == b'{':
            seeds.add('FuzzExportJson', member)
        elif name.endswith('.pkl'):
            seeds.add('FuzzPickle', member)


def stored_zip(members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


def legacy_seeds(seeds, etrecord, models):
    """Legacy torch.export.save zips (torch 2.1-2.7), of which the corpus has
    none: the ETRecord's edge program with its torch.save state dict, and the
    seed models' JSON with empty weights."""
    if etrecord.exists():
        z = zipfile.ZipFile(etrecord)
        program, state = z.read('edge_dialect_exported_program'), z.read('edge_dialect_exported_program_state_dict')
        seeds.add('FuzzPt2', stored_zip([('serialized_exported_program.json', program),
                                         ('serialized_state_dict.pt', state), ('serialized_constants.pt', b''),
                                         ('version', b'1')]))
    for model in models:
        for name, member in zip_members(model.read_bytes()):
            if name.endswith('models/model.json'):
                seeds.add('FuzzPt2', stored_zip([('serialized_exported_program.json', member),
                                                 ('serialized_state_dict.pt', b''),
                                                 ('serialized_constants.pt', b''), ('version', b'8.2')]))


def tool_seeds(seeds, tools, models):
    """Artifacts of every stage and .pte/.ptd files, made with the tools."""
    def run(*args):
        r = subprocess.run([str(a) for a in args], capture_output=True)
        return r.returncode == 0

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for model in models:
            base = tmp / model.stem
            edge, plan = base.with_suffix('.edge.json'), base.with_suffix('.plan.json')
            if not run(tools / 'exir-edge', model, '-o', edge):
                continue
            edge_doc = json.loads(edge.read_text())
            seeds.add('FuzzProgramJson', edge.read_bytes())
            # The aten stage as an artifact: the edge artifact around the model's
            # own torch.export JSON.
            for name, member in zip_members(model.read_bytes()):
                if name.endswith('models/model.json') or name.endswith('serialized_exported_program.json'):
                    aten = dict(edge_doc, stage='aten', methods={'forward': json.loads(member)})
                    seeds.add('FuzzProgramJson', json.dumps(aten).encode())
                    break
            stages = [(edge, plan, base.with_suffix('.pte'), [])]
            spec = ROOT / 'testdata/lit/partition/Inputs/add_only.yaml'
            for i, flags in enumerate([['--partitioner', 'AddMulPartitionerDemo'], ['--partitioner', str(spec)],
                                       ['--whole-module', 'ExirSubgraphJson']]):
                delegated = base.with_suffix(f'.del{i}.json')
                if run(tools / 'exir-partition', edge, '-o', delegated, *flags):
                    seeds.add('FuzzProgramJson', delegated.read_bytes())
                    stages.append((delegated, base.with_suffix(f'.del{i}.plan.json'),
                                   base.with_suffix(f'.del{i}.pte'), []))
            stages.append((edge, base.with_suffix('.ext.plan.json'), base.with_suffix('.ext.pte'),
                           ['--external-constants']))
            for src, planned, pte, emit_flags in stages:
                if not run(tools / 'exir-plan', src, '-o', planned):
                    continue
                seeds.add('FuzzProgramJson', planned.read_bytes())
                if run(tools / 'exir-emit', planned, '-o', pte, *emit_flags):
                    seeds.add('FuzzPte', pte.read_bytes())
                    ptd = pte.with_suffix('.ptd')
                    if ptd.exists():
                        seeds.add('FuzzPte', ptd.read_bytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--shared', default=str(ROOT.parent / 'shared'))
    ap.add_argument('--tools', help='directory with exir-edge, exir-partition, exir-plan, exir-emit')
    args = ap.parse_args()
    seeds = Seeds(args.out)
    shared = pathlib.Path(args.shared)
    testdata = ROOT / 'testdata'

    for path in sorted(testdata.rglob('*.json')) + sorted((shared / 'corpus').rglob('*.json')):
        data = path.read_bytes()
        seeds.add('FuzzExportJson', data)
        if b'"exir-program"' in data:
            seeds.add('FuzzProgramJson', data)
    for pattern in ('*.pt2', '*.bin', '*.pt', '*.zip'):
        for path in sorted(testdata.rglob(pattern)) + sorted((shared / 'corpus').rglob(pattern)):
            archive_seeds(seeds, path)
    legacy_seeds(seeds, shared / 'corpus/pt2/executorch_etrecord.bin', sorted((testdata / 'models').glob('*.pt2')))
    for path in sorted((shared / 'corpus').rglob('*.pte')) + sorted(testdata.rglob('*.pte')) + \
            sorted(testdata.rglob('*.ptd')):
        seeds.add('FuzzPte', path.read_bytes())
    for path in [ROOT / 'edge_ops/edge.yaml', shared / 'upstream/edge.yaml']:
        if path.exists():
            for chunk in yaml_entries(path.read_text(), per_seed=1):
                seeds.add('FuzzEdgeYaml', chunk)
    for path in sorted(testdata.rglob('*.yaml')):
        seeds.add('FuzzEdgeYaml', path.read_bytes())
    for chunk in yaml_entries((ROOT / 'lib/Edge/decompositions.yaml').read_text(), per_seed=2):
        seeds.add('FuzzRewriteRules', chunk)
    for path in sorted((ROOT / 'fuzz/seeds').rglob('*')):
        if path.is_file() and path.parent.name in MAX_LEN:
            seeds.add(path.parent.name, path.read_bytes())
    if args.tools:
        models = sorted((testdata / 'models').glob('*.pt2'))
        tool_seeds(seeds, pathlib.Path(args.tools), models)
    for target, n in seeds.count.items():
        print(f'seeds: {target}: {n}')
    if any(n == 0 for n in seeds.count.values()):
        sys.exit('seeds: a target has no seed')


if __name__ == '__main__':
    main()
