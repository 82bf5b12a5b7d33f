#!/usr/bin/env python3
"""PyTorch CUDA on the workloads of our bench, for the side-by-side of issue 15.

  python3 bench/torch_cuda.py [--reps 20] [--out torch.json] [--ours bench.json]

Times each workload with CUDA events after warm-up (median of --reps), with
the shapes and dtypes of our `accel bench` rows and the same row names
(op/case), plus the device-to-device copy bandwidth (bytes read + written).
warm = outputs preallocated and reused, cold = a fresh output every call
(PyTorch's caching allocator makes that nearly free on a GPU). With --ours
(the JSON of `accel bench --json` run on the same machine) it prints each
row of ours beside PyTorch's and the ratio (> 1: we are faster).
Run on the GPU machine by scripts/gpu-run.sh torch.
"""
import argparse, json, statistics, sys, time

import torch


def cuda_time(fn, reps, setup=None):
    """Median seconds of fn over reps runs, timed with CUDA events."""
    for _ in range(3):
        if setup:
            setup()
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        if setup:
            setup()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return statistics.median(ts)


def workloads(reps):
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    P = {}
    # copy bandwidth: 1 GiB device to device, bytes read + written
    x = torch.empty(1 << 28, dtype=torch.float32, device=dev).uniform_(generator=g)
    y = torch.empty_like(x)
    t = cuda_time(lambda: y.copy_(x), reps)
    P["copy/1GiB"] = dict(warm_s=t, cold_s=t, gbps=2 * x.numel() * 4 / t / 1e9)
    del x, y
    t = cuda_time(lambda: torch.tril_indices(10000, 10000, 0, device=dev), reps)
    P["tril_indices/10000x10000_int64"] = dict(warm_s=t, cold_s=t)
    t = cuda_time(lambda: torch.triu_indices(10000, 10000, 0, device=dev), reps)
    P["triu_indices/10000x10000_int64"] = dict(warm_s=t, cold_s=t)
    for case, shape in (("diag4096", (4096, 4096)), ("diag64x512x512", (64, 512, 512))):
        x = torch.rand(shape, generator=g, device=dev)
        d1, d2 = len(shape) - 2, len(shape) - 1
        src = torch.rand(x.diagonal(0, d1, d2).shape, generator=g, device=dev)
        out = torch.empty_like(x)

        def warm():
            out.copy_(x)
            out.diagonal(0, d1, d2).copy_(src)

        P["diagonal_scatter/" + case] = dict(
            warm_s=cuda_time(warm, reps),
            cold_s=cuda_time(lambda: torch.diagonal_scatter(x, src, 0, d1, d2), reps))
    N, M = 1 << 24, 1 << 20
    src = torch.rand(N, generator=g, device=dev)
    for case, idx, m in (("rand16M_1M", torch.randint(0, M, (N,), generator=g, device=dev), M),
                         ("hot16M_16", torch.randint(0, 16, (N,), generator=g, device=dev), 16),
                         ("perm16M", torch.randperm(N, generator=g, device=dev), N)):
        base = torch.rand(m, generator=g, device=dev)
        out = torch.empty_like(base)
        for red in (("sum", "amax", "mean") if case != "perm16M" else ("sum",)):
            P["scatter_reduce/%s_%s" % (case, red)] = dict(
                warm_s=cuda_time(lambda: out.scatter_reduce_(0, idx, src, red), reps, setup=lambda: out.copy_(base)),
                cold_s=cuda_time(lambda: base.scatter_reduce(0, idx, src, red), reps))
    x = torch.randint(-1000, 1000, (1 << 26,), dtype=torch.int32, generator=g, device=dev)
    o = torch.empty_like(x)
    P["cumsum/int32_64M"] = dict(
        warm_s=cuda_time(lambda: torch.cumsum(x, 0, dtype=torch.int32, out=o), reps),
        cold_s=cuda_time(lambda: torch.cumsum(x, 0, dtype=torch.int32), reps))
    k = torch.randint(0, 1 << 31, (N,), dtype=torch.int32, generator=g, device=dev)
    v, i = torch.empty_like(k), torch.empty(N, dtype=torch.int64, device=dev)
    P["sort/uint32_16M_perm"] = dict(
        warm_s=cuda_time(lambda: torch.sort(k, stable=True, out=(v, i)), reps),
        cold_s=cuda_time(lambda: torch.sort(k, stable=True), reps))
    k = torch.randint(0, M, (N,), dtype=torch.int64, generator=g, device=dev)
    v, i = torch.empty_like(k), torch.empty(N, dtype=torch.int64, device=dev)
    P["sort/int64_16M_below1M"] = dict(
        warm_s=cuda_time(lambda: torch.sort(k, stable=True, out=(v, i)), reps),
        cold_s=cuda_time(lambda: torch.sort(k, stable=True), reps))
    del k, v, i
    # our bench's keys: 1M random 64-bit values, each of the 16M drawn
    # from them (cmd/accel/internal/bench: a sort on the full width)
    vals = torch.randint(-(1 << 63), (1 << 63) - 1, (M,), dtype=torch.int64, generator=g, device=dev)
    u = vals[torch.randint(0, M, (N,), generator=g, device=dev)]
    del vals
    t = cuda_time(lambda: torch.unique(u, sorted=True, return_inverse=True, return_counts=True), reps)
    P["unique/int64_16M_1M"] = dict(warm_s=t, cold_s=t)
    return P


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", default="torch_cuda.json")
    ap.add_argument("--ours", help="accel bench --json output from the same machine")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_cuda: no CUDA device", file=sys.stderr)
        return 2
    P = workloads(a.reps)
    ours = {}
    if a.ours:
        for r in json.load(open(a.ours)):
            ours.setdefault("%s/%s" % (r["op"], r["case"]), []).append(r)
    print("%-34s %10s %10s | %10s %10s | %7s" % ("workload", "torch ms", "cold ms", "ours ms", "backend", "ratio"))
    for key, p in P.items():
        line = "%-34s %10.3f %10.3f" % (key, 1e3 * p["warm_s"], 1e3 * p["cold_s"])
        for r in ours.get(key, []):
            line += " | %10.3f %10s | %7.2f" % (1e3 * r["median_s"], r.get("backend", ""), p["warm_s"] / r["median_s"])
        print(line)
    json.dump(dict(date=time.strftime("%Y-%m-%d"), torch=torch.__version__,
                   device=torch.cuda.get_device_name(0), rows=P), open(a.out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
