#!/usr/bin/env python3
"""Joins a GPU run's PyTorch CUDA times (bench/torch_cuda.py --out) with our
bench JSON of the same run (accel bench --json) into the side-by-side JSON
that `accel bench --svg FILE --peers JSON` draws: one row per workload and
backend, peer "torch cuda (BACKEND)", ratio_warm = PyTorch's warm time /
ours (right of 1: ours faster).

  python3 bench/gpu_side_by_side.py TORCH.json BENCH.json OUT.json
"""
import json
import sys


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    torch = json.load(open(argv[1]))
    ours = json.load(open(argv[2]))
    rows = []
    backends = []
    for r in ours:
        key = "%s/%s" % (r["op"], r["case"])
        p = torch["rows"].get(key)
        if p is None or not r.get("median_s"):
            continue
        if r["backend"] not in backends:
            backends.append(r["backend"])
        rows.append(dict(workload=key, ours_s=r["median_s"], peer="torch cuda (%s)" % r["backend"],
                         peer_warm_s=p["warm_s"], peer_cold_s=p["cold_s"],
                         ratio_warm=p["warm_s"] / r["median_s"]))
    if not rows:
        print("gpu_side_by_side: no workload in both files", file=sys.stderr)
        return 1
    json.dump(dict(date=torch.get("date", ""), backend="+".join(backends), device=torch.get("device", ""),
                   torch=torch.get("torch", ""), rows=rows), open(argv[3], "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
