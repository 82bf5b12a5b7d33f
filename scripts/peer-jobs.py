#!/usr/bin/env python3
"""peer-jobs.py CASES_ROOT OP IMPL_ROOT: print the `accel run --batch` jobs
(JSON lines) of every peer case CASES_ROOT/OP/<case>/manifest.json, with
outputs to IMPL_ROOT/OP/<case>, the layout `check.py --all CASES_ROOT
IMPL_ROOT` reads; as cmd/accel/peer_test.go writes them. Standard library
only (for scripts/gpu-run.sh on a machine without Go)."""
import json
import os
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    cases, op, impl = os.path.abspath(argv[0]), argv[1], os.path.abspath(argv[2])
    root = os.path.join(cases, op)
    names = sorted(c for c in os.listdir(root) if os.path.isfile(os.path.join(root, c, "manifest.json")))
    if not names:
        print("peer-jobs: no cases under %s" % root, file=sys.stderr)
        return 1
    for c in names:
        d = os.path.join(root, c)
        with open(os.path.join(d, "manifest.json")) as f:
            m = json.load(f)
        job = {"op": m["op"], "params": m.get("params") or {},
               "inputs": {n: os.path.join(d, "in_%s.npy" % n) for n in m.get("inputs", [])},
               "out": os.path.join(impl, op, c)}
        print(json.dumps(job))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
