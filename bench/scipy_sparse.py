#!/usr/bin/env python3
"""SciPy on the sparse-divide rows of our bench, for the side-by-side of issue 14.

  /usr/bin/python3 bench/scipy_sparse.py [--reps 5] [--quick] [--out scipy.json] [--ours bench.json]

Builds inputs of the shapes and densities of `accel bench --op sparse_div`
(its own random draws, not our bytes: numpy's generator, fixed seed):
  csr200k_5M       200,000 x 200,000 float32, 5M distinct random entries in
                   each operand, sorted CSR; SciPy's sparse divide
                   x._binopt(y, "_eldiv_") (what x / y runs for two sparse
                   matrices, before densifying), which keeps the union.
  coo200k_5M_dups  the same as unsorted COO with 10% duplicate entries:
                   tocsr() of each operand (SciPy sums duplicates there),
                   sum_duplicates(), then the divide, all timed.
  csrb64_4096      64 batches of 4096 x 4096 at 1% density: SciPy has no
                   batched CSR, so 64 divides, timed together.
Prints the median of --reps calls (after one warm-up) in ms. With --ours
(the JSON of `accel bench --op sparse_div --json` from the same sitting) it
prints each of our rows' warm wall time (`wall_s`) beside SciPy's and the ratio (> 1: we are faster).
Python 3 with NumPy and SciPy (Debian: python3-numpy python3-scipy); the
library itself does not depend on them.
"""
import argparse, json, statistics, sys, time

import numpy as np
import scipy
import scipy.sparse as sp


def median_ms(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return 1e3 * statistics.median(ts)


def distinct_keys(rng, n, size):
    keys = np.unique(rng.integers(0, size, n + n // 16, dtype=np.int64))
    while len(keys) < n:
        keys = np.unique(np.concatenate([keys, rng.integers(0, size, n // 16 + 1, dtype=np.int64)]))
    return np.sort(rng.choice(keys, n, replace=False))


def values(rng, n):
    return (rng.random(n, dtype=np.float32) * 2 - 1).astype(np.float32)


def csr_of(keys, rows, cols, vals):
    return sp.csr_matrix((vals, (keys // cols, keys % cols)), shape=(rows, cols))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="1/16 of each case")
    ap.add_argument("--out")
    ap.add_argument("--ours")
    a = ap.parse_args()
    div, tag = (16, "_quick") if a.quick else (1, "")
    nnz = 5_000_000 // div
    rng = np.random.default_rng(14)
    rows = []

    n = 200_000
    kx, ky = distinct_keys(rng, nnz, n * n), distinct_keys(rng, nnz, n * n)
    x, y = csr_of(kx, n, n, values(rng, nnz)), csr_of(ky, n, n, values(rng, nnz))
    rows.append({"case": "csr200k_5M" + tag, "ms": median_ms(lambda: x._binopt(y, "_eldiv_"), a.reps)})

    def coo_dups(keys):
        k = np.concatenate([keys, rng.choice(keys, len(keys) // 10)])
        rng.shuffle(k)
        return sp.coo_matrix((values(rng, len(k)), (k // n, k % n)), shape=(n, n))

    xo, yo = coo_dups(kx), coo_dups(ky)

    def coo_div():
        xc, yc = xo.tocsr(), yo.tocsr()
        xc.sum_duplicates()
        yc.sum_duplicates()
        return xc._binopt(yc, "_eldiv_")

    rows.append({"case": "coo200k_5M_dups" + tag, "ms": median_ms(coo_div, a.reps)})

    b, r = 64, 4096
    dense = b * r * r // 100 // div
    kb = distinct_keys(rng, dense, b * r * r)
    kb2 = distinct_keys(rng, dense, b * r * r)
    xb = [csr_of(kb[(kb // (r * r)) == i] % (r * r), r, r, values(rng, int(((kb // (r * r)) == i).sum()))) for i in range(b)]
    yb = [csr_of(kb2[(kb2 // (r * r)) == i] % (r * r), r, r, values(rng, int(((kb2 // (r * r)) == i).sum()))) for i in range(b)]
    rows.append({"case": "csrb64_4096" + tag, "ms": median_ms(lambda: [p._binopt(q, "_eldiv_") for p, q in zip(xb, yb)], a.reps)})

    out = {"scipy": scipy.__version__, "numpy": np.__version__, "reps": a.reps, "rows": rows}
    ours = {}
    if a.ours:
        with open(a.ours) as f:
            data = json.load(f)
        for row in data:
            if row.get("op") == "sparse_div":
                ours[row["case"]] = row
    for row in rows:
        line = f"{row['case']:22s} scipy {row['ms']:9.1f} ms"
        o = ours.get(row["case"])
        if o:
            ms = 1e3 * o["wall_s"]
            row["ours_wall_ms"], row["ours_backend"] = ms, o["backend"]
            if ms > 0:
                line += f"   ours ({o['backend']}, wall) {ms:9.1f} ms   ratio {row['ms'] / ms:6.2f}"
        print(line)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
