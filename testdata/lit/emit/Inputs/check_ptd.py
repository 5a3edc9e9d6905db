"""check_ptd.py PLAN PTE_LISTING PTD_LISTING PTD: the .ptd holds, under each
FQN, exactly the bytes the planned program references for that constant, and
the .pte marks exactly those FQNs EXTERNAL (listings are exir-inspect output)."""
import json, os, re, sys

plan, pte_listing, ptd_listing, ptd = sys.argv[1:]
constants = json.load(open(plan))["constants"]
ptd_text = open(ptd_listing).read()
base = int(re.search(r"segment_base_offset (\d+)", ptd_text).group(1))
segments = [(int(o), int(s)) for o, s in re.findall(r"\[\d+\] offset (\d+), size (\d+)", ptd_text)]
keys = {k: int(s) for k, s in re.findall(r"^  (\S+): segment (\d+)", ptd_text, re.M)}
external = set(re.findall(r'extra=\{fqn="([^"]+)" EXTERNAL\}', open(pte_listing).read()))
assert external == set(keys), "pte EXTERNAL %s != ptd keys %s" % (sorted(external), sorted(keys))
data = open(ptd, "rb").read()
for fqn in sorted(keys):
    ref = constants[fqn]["data"]
    with open(os.path.join(os.path.dirname(plan), ref["file"]), "rb") as f:
        f.seek(ref["offset"])
        want = f.read(ref["length"])
    offset, size = segments[keys[fqn]]
    assert data[base + offset:base + offset + size] == want, fqn
    print("%s: %d bytes match" % (fqn, size))
