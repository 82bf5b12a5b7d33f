#!/usr/bin/env python3
"""Randomized peer cases: draw many cases per op, compute what the peers give
(PyTorch 1.13, NumPy 1.24, SciPy 1.10, as the shared peer cases do), run them
through `accel run --batch` on each backend and compare with the peer cases'
own checker.

  /usr/bin/python3 scripts/peer_fuzz.py [--n 40] [--seed 1] [--op OP]... [--backend opencl] [--backend vulkan]
      [--plans own|gpu|both] [--keep DIR]

Needs python3-torch, python3-numpy and python3-scipy (Debian) and bin/accel
(`make build`); the library does not depend on them. Cases are written in the
peer cases' layout (op/case/manifest.json, in_*.npy, want_*.npy), so a failing
case can be copied into testdata/peer-cases as it is. The draws cover what the
fixed cases do not: random ranks, shapes (0 and 1 included), negative dims,
offsets past the edge, every dtype, NaN/inf/-0, heavy and no collisions, and
duplicate and explicit-zero sparse entries. Each backend runs them with its
device's own plans and again with every op planned as for a discrete GPU
(ACCEL_GPU_PLANS=1: atomics, tiled sorts with look-back, the GPU splits and
partitions), so the GPU paths meet the peers on the CPU drivers too (--plans).
Exit status 1 when a case fails.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, warnings

import numpy as np
import scipy.sparse as sp
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
warnings.filterwarnings("ignore", message=".*scatter_reduce.*beta")
F_TOL = {"float32": 4.76837158203125e-07, "float64": 8.881784197001252e-16}
TD = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32, "int64": torch.int64}


class Case:
    def __init__(self, op, name, params, inputs, wants, check="elementwise", tol=(0.0, 0.0), call="", extra=None):
        self.op, self.name, self.params, self.inputs, self.wants = op, name, params, inputs, wants
        self.check, self.tol, self.call, self.extra = check, tol, call, extra or {}

    def write(self, root):
        d = os.path.join(root, self.op, self.name)
        os.makedirs(d, exist_ok=True)
        for k, v in self.inputs.items():
            np.save(os.path.join(d, "in_%s.npy" % k), v)
        for k, v in self.wants.items():
            np.save(os.path.join(d, "want_%s.npy" % k), v)
        m = {"op": self.op, "case": self.name, "params": self.params, "inputs": list(self.inputs),
             "outputs": list(self.wants), "input_dtypes": {k: str(v.dtype) for k, v in self.inputs.items()},
             "output_dtypes": {k: str(v.dtype) for k, v in self.wants.items()},
             "output_shapes": {k: list(v.shape) for k, v in self.wants.items()}, "check": self.check,
             "tolerance": {"rtol": self.tol[0], "atol": self.tol[1]}, "expect_error": self.check == "error",
             "source": {"peer": "peer_fuzz.py", "call": self.call}}
        m.update(self.extra)
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(m, f, indent=1)


def floats(rng, shape, dt, special=0.0, ints=False):
    """Random values of a float dtype; with probability special each, NaN, +-inf or -0."""
    x = (rng.integers(-4, 5, shape) if ints else rng.standard_normal(shape) * 4).astype(dt)
    if special and x.size:
        m = rng.random(shape) < special
        x[m] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dt), int(m.sum()))
    return x


def values(rng, shape, dt, special=0.0):
    if dt.startswith("float"):
        return floats(rng, shape, dt, special, ints=rng.random() < 0.3)
    lim = 50 if rng.random() < 0.5 else 2 ** 31 - 1
    return rng.integers(-lim, lim, shape, dtype=np.int64).astype(dt)


def rshape(rng, rank, hi=6, zero=0.1):
    return [0 if rng.random() < zero else int(rng.integers(1, hi + 1)) for _ in range(rank)]


def gen_tri(rng, op, i):
    row, col = int(rng.integers(0, 40)), int(rng.integers(0, 40))
    if rng.random() < 0.2:
        row, col = int(rng.integers(0, 3)), int(rng.integers(0, 3))
    off = int(rng.integers(-row - 3, col + 4))
    dt = str(rng.choice(["int32", "int64"]))
    f = torch.tril_indices if op == "tril_indices" else torch.triu_indices
    out = f(row, col, off, dtype=TD[dt]).numpy()
    return Case(op, "r%d_%dx%d_off%d_%s" % (i, row, col, off, dt), {"row": row, "col": col, "offset": off, "dtype": dt},
                {}, {"out": out}, call="torch.%s(%d, %d, %d)" % (op, row, col, off))


def gen_diag(rng, i):
    rank = int(rng.integers(2, 5))
    shape = rshape(rng, rank)
    d1, d2 = [int(v) for v in rng.choice(rank, 2, replace=False)]
    off = int(rng.integers(-shape[d1] - 2, shape[d2] + 3))
    d1 -= rank * int(rng.random() < 0.3)
    d2 -= rank * int(rng.random() < 0.3)
    dt = str(rng.choice(["float32", "float64", "int32", "int64"]))
    inp = torch.from_numpy(values(rng, shape, dt))
    dshape = list(torch.diagonal(inp, off, d1, d2).shape)
    src = torch.from_numpy(values(rng, dshape, dt))
    out = torch.diagonal_scatter(inp, src, off, d1, d2).numpy()
    return Case("diagonal_scatter", "r%d_%s_off%d_d%d_%d_%s" % (i, "x".join(map(str, shape)), off, d1, d2, dt),
                {"offset": off, "dim1": d1, "dim2": d2}, {"input": inp.numpy(), "src": src.numpy()}, {"out": out},
                call="torch.diagonal_scatter(input, src, %d, %d, %d)" % (off, d1, d2))


def scatter_inputs(rng, float_only=False):
    rank = int(rng.integers(1, 5))
    shape = rshape(rng, rank, zero=0.05)
    dim = int(rng.integers(0, rank))
    if shape[dim] == 0:
        shape[dim] = 1
    ishape = [int(rng.integers(0 if rng.random() < 0.05 else 1, s + 1)) if s else 0 for s in shape]
    ishape[dim] = int(rng.integers(0, 3 * shape[dim] + 2))
    sshape = [s + int(rng.integers(0, 2)) for s in ishape]
    heavy = rng.random() < 0.5
    hi = 1 + int(rng.integers(0, 2)) if heavy else shape[dim]
    index = rng.integers(0, min(hi, shape[dim]), ishape).astype(np.int64)
    dt = str(rng.choice(["float32", "float64"] if float_only else ["float32", "float64", "int32", "int64"]))
    return shape, dim - rank * int(rng.random() < 0.3), index, sshape, dt, heavy


def sum_tol(dt, red, src, inp):
    if not dt.startswith("float"):
        return (0.0, 0.0)
    eps = float(np.finfo(dt).eps)
    scale = float(np.nansum(np.abs(src[np.isfinite(src)]))) + float(np.nansum(np.abs(inp[np.isfinite(inp)])))
    if red in ("sum", "mean"):
        return (F_TOL[dt], 4 * eps * scale)
    if red == "prod":
        return (64 * eps, 0.0)
    return (F_TOL[dt], 0.0)


def gen_scatter_reduce(rng, i, backward=False):
    shape, dim, index, sshape, dt, heavy = scatter_inputs(rng, float_only=backward)
    if backward:
        # torch 1.13's ScatterReduceBackward0 returns src's gradient in
        # index's shape, and fails where src is larger
        sshape = list(index.shape)
    red = str(rng.choice(["sum", "prod", "mean", "amax", "amin"]))
    self_ = bool(rng.random() < 0.5)
    special = 0.05 if (red in ("amax", "amin") and rng.random() < 0.5) else 0.0
    inp = values(rng, shape, dt, special)
    src = values(rng, sshape, dt, special)
    if red == "prod" and dt.startswith("float"):
        inp = (rng.random(shape) * 1.5 + 0.25).astype(dt) * np.where(rng.random(shape) < 0.1, 0, 1).astype(dt)
        src = (rng.random(sshape) * 1.5 + 0.25).astype(dt) * np.where(rng.random(sshape) < 0.1, 0, 1).astype(dt)
    if red == "prod" and not dt.startswith("float"):
        inp, src = rng.integers(-3, 4, shape).astype(dt), rng.integers(-3, 4, sshape).astype(dt)
    name = "r%d_%s_dim%d_%s_%s_self%d%s" % (i, "x".join(map(str, shape)), dim, dt, red, self_, "_heavy" if heavy else "")
    params = {"dim": dim, "reduce": red, "include_self": self_}
    if not backward and rng.random() < 0.3:
        params["deterministic"] = True
    ti, ts = torch.from_numpy(inp), torch.from_numpy(src)
    tx = torch.from_numpy(index)
    call = "input.scatter_reduce(%d, index, src, %r, include_self=%s)" % (dim, red, self_)
    if not backward:
        out = ti.scatter_reduce(dim, tx, ts, red, include_self=self_).numpy()
        return Case("scatter_reduce", name, params, {"input": inp, "index": index, "src": src}, {"out": out},
                    tol=sum_tol(dt, red, src, inp), call=call)
    ti.requires_grad_(True)
    ts.requires_grad_(True)
    out = ti.scatter_reduce(dim, tx, ts, red, include_self=self_)
    g = torch.from_numpy(floats(rng, shape, dt))
    gi, gs = torch.autograd.grad(out, [ti, ts], g, allow_unused=True)
    gi = torch.zeros_like(ti) if gi is None else gi
    gs = torch.zeros_like(ts) if gs is None else gs
    tol = (1e-11, 1e-13) if dt == "float64" else (2e-5, 1e-6)
    return Case("scatter_reduce_backward", name, params,
                {"input": inp, "index": index, "src": src, "grad_output": g.numpy()},
                {"out": out.detach().numpy(), "grad_input": gi.numpy(), "grad_src": gs.numpy()}, tol=tol,
                call="torch.autograd.grad(" + call + ", [input, src], grad_output)")


def gen_cumsum(rng, i):
    n = int(rng.choice([0, 1, 2, 63, 64, 65, 1000, 4097, int(rng.integers(0, 100000))]))
    dt = str(rng.choice(["int32", "int64", "uint32", "uint64"]))
    x = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(dt)
    ex = bool(rng.random() < 0.5)
    inc = np.cumsum(x, dtype=x.dtype)
    out = np.concatenate([np.zeros(1, x.dtype), inc[:-1]]) if ex and n else inc
    return Case("cumsum", "r%d_%s_%d_ex%d" % (i, dt, n, ex), {"exclusive": ex}, {"x": x}, {"out": out.astype(dt)},
                call="np.cumsum(x, dtype=x.dtype)")


def sort_desc_perm(keys):
    asc = np.argsort(keys, kind="stable")
    k = keys[asc]
    if k.dtype.kind == "f":
        same = (k[1:] == k[:-1]) | (np.isnan(k[1:]) & np.isnan(k[:-1]))
    else:
        same = k[1:] == k[:-1]
    starts = np.concatenate([[0], np.nonzero(~same)[0] + 1, [len(k)]]) if len(k) else np.array([0])
    groups = [asc[starts[j]:starts[j + 1]] for j in range(len(starts) - 1)]
    return np.concatenate(groups[::-1]).astype(np.int64) if groups else np.zeros(0, np.int64)


def gen_sort(rng, i):
    n = int(rng.choice([0, 1, 2, 255, 256, 257, 4097, int(rng.integers(0, 70000))]))
    dt = str(rng.choice(["int32", "int64", "uint32", "uint64", "float32", "float64"]))
    if dt.startswith("float"):
        keys = floats(rng, n, dt, 0.05, ints=rng.random() < 0.5)
    else:
        hi = 2 ** 64 if dt.endswith("64") else 2 ** 32
        keys = rng.integers(0, min(hi, 2 ** 64 - 1) if rng.random() < 0.5 else 20, n, dtype=np.uint64).astype(dt)
    desc = bool(rng.random() < 0.5)
    perm = sort_desc_perm(keys) if desc else np.argsort(keys, kind="stable").astype(np.int64)
    return Case("sort", "r%d_%s_%d_desc%d" % (i, dt, n, desc), {"descending": desc}, {"keys": keys},
                {"keys": keys[perm], "perm": perm}, call="np.argsort(keys, kind='stable')")


def gen_unique(rng, i):
    n = int(rng.choice([0, 1, 2, 1000, int(rng.integers(0, 50000))]))
    dt = str(rng.choice(["int32", "int64", "uint32", "uint64"]))
    hi = int(rng.choice([3, 1000, 2 ** 31]))
    x = rng.integers(0, hi, n, dtype=np.int64).astype(dt)
    if dt.startswith("int") and rng.random() < 0.5:
        x = (x - hi // 2).astype(dt)
    v, inv, c = np.unique(x, return_inverse=True, return_counts=True)
    return Case("unique", "r%d_%s_%d" % (i, dt, n), {}, {"x": x},
                {"values": v, "inverse": inv.astype(np.int64), "counts": c.astype(np.int64)}, call="np.unique")


def gen_segment(rng, i):
    n = int(rng.choice([0, 1, 2, 257, 4096, int(rng.integers(0, 30000))]))
    segs = int(rng.integers(1, max(2, n // int(rng.choice([1, 5, 50])) + 2)))
    dt = str(rng.choice(["int32", "int64", "float32", "float64"]))
    red = str(rng.choice(["sum", "min", "max"]))
    ids = np.sort(rng.integers(0, segs, n)).astype(np.int64)
    v = values(rng, n, dt, 0.0)
    if dt.startswith("float"):
        ident = {"sum": 0, "min": np.inf, "max": -np.inf}[red]
    else:
        info = np.iinfo(dt)
        ident = {"sum": 0, "min": info.max, "max": info.min}[red]
    out = np.full(segs, ident, dtype=dt)
    {"sum": np.add, "min": np.minimum, "max": np.maximum}[red].at(out, ids, v)
    tol = (0.0, 0.0)
    if dt.startswith("float") and red == "sum":
        tol = (1e-5, 1e-5) if dt == "float32" else (1e-12, 1e-13)
    return Case("segment_reduce", "r%d_%s_%d_%s_%d" % (i, dt, n, red, segs), {"reduce": red, "num_segments": segs},
                {"values": v, "segment_ids": ids}, {"out": out}, tol=tol, call="np.%s.at" % red)


def gen_compact(rng, i):
    n = int(rng.choice([0, 1, 2, 4097, int(rng.integers(0, 50000))]))
    dt = str(rng.choice(["int32", "int64", "float32", "float64"]))
    x = values(rng, n, dt, 0.05)
    mask = rng.random(n) < float(rng.choice([0.0, 0.1, 0.5, 1.0]))
    return Case("compact", "r%d_%s_%d" % (i, dt, n), {}, {"x": x, "mask": mask},
                {"out": x[mask], "index": np.nonzero(mask)[0].astype(np.int64)}, call="x[mask], np.nonzero(mask)[0]")


def gen_put(rng, i):
    """NumPy's put_along_axis (assign), indices unique along the axis in
    every slice (so the order of writes never matters), negative ones
    wrapping; axis=None puts into the flattened array."""
    dt = str(rng.choice(["float32", "float64", "int32", "int64"]))
    rank = int(rng.integers(1, 5))
    shape = rshape(rng, rank, zero=0.05)
    arr = values(rng, shape, dt)
    if rng.random() < 0.15:
        n = int(np.prod(shape))
        k = int(rng.integers(0, n + 1))
        idx = rng.permutation(n)[:k].astype(np.int64)
        idx = np.where(rng.random(k) < 0.3, idx - n, idx)
        vals = values(rng, [k] if rng.random() < 0.7 else [1], dt)
        out = arr.copy()
        np.put_along_axis(out, idx, vals, axis=None)
        taken = np.take_along_axis(out, idx, axis=None)
        params = {"axis": None}
    else:
        axis = int(rng.integers(0, rank))
        n = shape[axis]
        ishape = [s if rng.random() < 0.7 else 1 for s in shape]
        ishape[axis] = int(rng.integers(0, n + 1))
        if n == 0:
            ishape[axis] = 0
        idx = np.zeros(ishape, np.int64)
        for pos in np.ndindex(*[s for d, s in enumerate(ishape) if d != axis]):
            sl = list(pos)
            sl.insert(axis, slice(None))
            perm = rng.permutation(n)[:ishape[axis]]
            idx[tuple(sl)] = np.where(rng.random(len(perm)) < 0.3, perm - n, perm)
        vshape = [s if rng.random() < 0.8 else 1 for s in ishape]
        vals = values(rng, vshape, dt)
        out = arr.copy()
        np.put_along_axis(out, idx, vals, axis=axis)
        taken = np.take_along_axis(out, idx, axis=axis)
        params = {"axis": axis - rank * int(rng.random() < 0.3)}
    if rng.random() < 0.25:  # Paddle (and NumPy) take int32 indices too
        idx = idx.astype(np.int32)
    return Case("put_along_axis", "r%d_%s_%s_axis%s" % (i, "x".join(map(str, shape)), dt, params["axis"]), params,
                {"arr": arr, "indices": idx, "values": vals}, {"out": out, "taken": taken},
                call="numpy.put_along_axis(out, indices, values, axis)")


def gen_scatter(rng, i):
    """torch's scatter (assign) with at most one index per target, so the
    peer's result does not depend on write order."""
    rank = int(rng.integers(1, 5))
    shape = rshape(rng, rank, zero=0.05)
    dim = int(rng.integers(0, rank))
    n = shape[dim]
    ishape = [int(rng.integers(0, s + 1)) for s in shape]
    ishape[dim] = int(rng.integers(0, n + 1))
    index = np.zeros(ishape, np.int64)
    for pos in np.ndindex(*[s for d, s in enumerate(ishape) if d != dim]):
        sl = list(pos)
        sl.insert(dim, slice(None))
        index[tuple(sl)] = rng.permutation(n)[:ishape[dim]]
    sshape = [s + int(rng.integers(0, 2)) for s in ishape]
    dt = str(rng.choice(["float32", "float64", "int32", "int64"]))
    inp, src = values(rng, shape, dt, 0.05), values(rng, sshape, dt, 0.05)
    d = dim - rank * int(rng.random() < 0.3)
    out = torch.from_numpy(inp).scatter(d, torch.from_numpy(index), torch.from_numpy(src)).numpy()
    return Case("scatter", "r%d_%s_dim%d_%s" % (i, "x".join(map(str, shape)), d, dt), {"dim": d},
                {"input": inp, "index": index, "src": src}, {"out": out}, call="input.scatter(%d, index, src)" % d)


def gen_convert(rng, op, i):
    """sparse_coalesce (torch's coalesce), sparse_to_csr and sparse_to_coo
    (scipy's conversions), 2-D and batched 3-D."""
    dt = str(rng.choice(["float32", "float64"]))
    rank = 2 if op != "sparse_coalesce" and rng.random() < 0.6 else (3 if op != "sparse_coalesce" else int(rng.integers(1, 5)))
    shape = rshape(rng, rank, hi=8, zero=0.05)
    size = int(np.prod(shape))
    keys = np.nonzero(rng.random(size) < float(rng.choice([0.0, 0.2, 0.7])))[0].astype(np.int64)
    vals = floats(rng, len(keys), dt, 0.02, ints=rng.random() < 0.5)
    idx_dt = np.int64
    if op == "sparse_coalesce":
        k, v = list(keys), list(vals)
        for p in (rng.choice(len(keys), len(keys) // 3, replace=False) if len(keys) else []):
            k.append(keys[p])
            v.append(floats(rng, 1, dt)[0])
        perm = rng.permutation(len(k))
        k, v = np.array(k, np.int64)[perm], np.array(v, dt)[perm]
        ind = np.array(np.unravel_index(k, shape), np.int64).reshape(rank, len(k))
        t = torch.sparse_coo_tensor(torch.from_numpy(ind), torch.from_numpy(v), shape).coalesce()
        tol = (F_TOL[dt], 8 * float(np.finfo(dt).eps) * (float(np.abs(v[np.isfinite(v)]).sum()) + 1))
        return Case(op, "r%d_%s_%s" % (i, "x".join(map(str, shape)), dt), {"shape": shape}, {"indices": ind, "values": v},
                    {"indices": t.indices().numpy().astype(np.int64), "values": t.values().numpy()}, tol=tol,
                    call="torch.sparse_coo_tensor(indices, values, shape).coalesce()")
    b, r, c = (1, shape[0], shape[1]) if rank == 2 else shape
    crow = np.zeros((b, r + 1), np.int64)
    rows = keys // c if c else keys
    for bi in range(b):
        if r:
            crow[bi, 1:] = np.cumsum(np.bincount(rows[rows // r == bi] % r, minlength=r)[:r])
    crow = crow.reshape(-1) if rank == 2 else crow
    col = (keys % c if c else keys).astype(np.int64)
    ind = np.array(np.unravel_index(keys, shape), np.int64).reshape(rank, len(keys))
    name = "r%d_%s_%s" % (i, "x".join(map(str, shape)), dt)
    if op == "sparse_to_csr":
        perm = rng.permutation(len(keys))
        return Case(op, name, {"shape": shape}, {"indices": np.ascontiguousarray(ind[:, perm]), "values": vals[perm]},
                    {"crow": crow, "col": col, "values": vals}, check="sparse",
                    extra={"sparse": {"format": "csr" if rank == 2 else "csr_batched", "crow": "crow", "col": "col",
                                      "aligned_values": ["values"]}, "order_specified": False, "optional_outputs": []},
                    call="scipy coo -> csr")
    return Case(op, name, {"shape": shape}, {"crow": crow, "col": col, "values": vals}, {"indices": ind, "values": vals},
                check="sparse", extra={"sparse": {"format": "coo", "indices": "indices", "aligned_values": ["values"]},
                                       "order_specified": False, "optional_outputs": []}, call="scipy csr -> coo")


SPARSE_OPS = {"sparse_div": np.divide, "sparse_add": np.add, "sparse_sub": np.subtract, "sparse_mul": np.multiply}


def gen_sparse(rng, op, i):
    fmt = str(rng.choice(["coo", "csr", "csr_batched"]))
    dt = str(rng.choice(["float32", "float64"]))
    if fmt == "coo":
        shape = rshape(rng, int(rng.integers(1, 5)), hi=7, zero=0.05)
    elif fmt == "csr":
        shape = rshape(rng, 2, hi=40, zero=0.05)
    else:
        shape = rshape(rng, 3, hi=9, zero=0.05)
    size = int(np.prod(shape))
    backward = op == "sparse_div_backward"

    def operand():
        dens = float(rng.choice([0.0, 0.1, 0.4, 1.0]))
        keys = np.nonzero(rng.random(size) < dens)[0]
        vals = floats(rng, len(keys), dt, 0.0 if backward else 0.05, ints=rng.random() < 0.3)
        if rng.random() < 0.2:  # explicit zeros
            vals[rng.random(len(keys)) < 0.3] = 0
        return keys, vals

    (kx, vx), (ky, vy) = operand(), operand()
    if rng.random() < 0.2:
        ky, vy = kx.copy(), floats(rng, len(kx), dt, 0.05)
    union = np.union1d(kx, ky).astype(np.int64)
    X, Y = np.zeros(size), np.zeros(size)
    X[kx], Y[ky] = vx, vy
    fn = SPARSE_OPS["sparse_div" if backward else op]
    with np.errstate(all="ignore"):
        res = fn(X[union], Y[union]).astype(dt)
    dense = np.zeros(size, dt)
    dense[union] = res
    inputs, wants, extra = {}, {}, {}
    params = {"format": fmt, "ndim": len(shape), "shape": shape, "dtype": dt}

    def coo_in(pfx, keys, vals):
        # unsorted, with duplicates that sum to the value (exactly: halves)
        k, v = list(keys), list(vals)
        if len(k) and rng.random() < 0.4:
            pick = rng.choice(len(keys), max(1, len(keys) // 4), replace=False)
            for p in pick:
                if np.isfinite(vals[p]):
                    v[p] = vals[p] / 2
                    k.append(keys[p])
                    v.append(vals[p] / 2)
        perm = rng.permutation(len(k))
        k, v = np.array(k, np.int64)[perm], np.array(v, dt)[perm]
        inputs[pfx + "_indices"] = np.array(np.unravel_index(k, shape), np.int64).reshape(len(shape), len(k))
        inputs[pfx + "_values"] = v

    def csr_parts(keys):
        if fmt == "csr":
            b, r, c = 1, shape[0], shape[1]
        else:
            b, r, c = shape
        rows = keys // c if c else keys
        crow = np.zeros((b, r + 1), np.int64)
        for bi in range(b):
            crow[bi, 1:] = np.cumsum(np.bincount(rows[(rows // r) == bi] % r, minlength=r)[:r]) if r else []
        # Paddle's batched layout: crows [batch, rows+1], as the peers give it
        return (crow.reshape(-1) if fmt == "csr" else crow), (keys % c if c else keys).astype(np.int64)

    if fmt == "coo":
        coo_in("x", kx, vx)
        coo_in("y", ky, vy)
        wants["indices"] = np.array(np.unravel_index(union, shape), np.int64).reshape(len(shape), len(union))
        extra["sparse"] = {"format": "coo", "indices": "indices", "aligned_values": ["values"]}
    else:
        for pfx, k, v in (("x", kx, vx), ("y", ky, vy)):
            crow, col = csr_parts(k)
            inputs[pfx + "_crow"], inputs[pfx + "_col"], inputs[pfx + "_values"] = crow, col, v.astype(dt)
        wants["crow"], wants["col"] = csr_parts(union)
        extra["sparse"] = {"format": fmt, "crow": "crow", "col": "col", "aligned_values": ["values"]}
    if rng.random() < 0.25:  # int32 index inputs are accepted too (int64 inside and out)
        for k in list(inputs):
            if inputs[k].dtype == np.int64:
                inputs[k] = inputs[k].astype(np.int32)
    wants["values"] = res
    wants["dense"] = dense.reshape(shape)
    if backward:
        g = floats(rng, len(union), dt)
        inputs["grad_out_values"] = g
        xu, yu = X[union], Y[union]
        with np.errstate(all="ignore"):
            wants["grad_x"] = (g / yu).astype(dt)
            wants["grad_y"] = (-g * res.astype(np.float64) / yu).astype(dt)
        extra["sparse"]["aligned_values"] += ["grad_x", "grad_y"]
    tol = (F_TOL[dt] / 2, 0.0) if not backward else ((1e-12, 0.0) if dt == "float64" else (1e-6, 0.0))
    return Case(op, "r%d_%s_%s_%s" % (i, fmt, "x".join(map(str, shape)), dt), params, inputs, wants, check="sparse",
                tol=tol, call="numpy %s of the dense float64 operands at the union pattern" % fn.__name__,
                extra=dict(extra, order_specified=False, optional_outputs=[]))


def peer_raises(fn):
    try:
        fn()
    except Exception:  # the peer rejects it: so must we
        return True
    return False


def gen_errors(rng, i):
    """A case every peer rejects, drawn from one of the ways inputs go
    wrong; the batch must leave error.txt and no arrays."""
    while True:
        kind = str(rng.choice(["scatter_oob", "scatter_neg", "scatter_big_index", "scatter_rank", "scatter_dim",
                               "diag_src", "diag_same_dims", "tri_neg", "put_oob", "put_rank",
                               "sparse_shape", "coo_oob", "csr_col_oob", "csr_crow"]))
        dt = str(rng.choice(["float32", "float64"]))
        if kind.startswith("scatter"):
            shape = [int(v) for v in rng.integers(1, 5, int(rng.integers(1, 4)))]
            dim = int(rng.integers(0, len(shape)))
            ishape = list(shape)
            index = rng.integers(0, shape[dim], ishape).astype(np.int64)
            src = floats(rng, ishape, dt)
            if kind == "scatter_oob":
                index.flat[int(rng.integers(0, index.size))] = shape[dim] + int(rng.integers(0, 3))
            elif kind == "scatter_neg":
                index.flat[int(rng.integers(0, index.size))] = -1 - int(rng.integers(0, shape[dim]))
            elif kind == "scatter_big_index":
                src = floats(rng, [max(0, v - 1) if d == 0 else v for d, v in enumerate(ishape)], dt)
            elif kind == "scatter_rank":
                index = index.reshape(index.shape + (1,))
            else:
                dim = len(shape) + int(rng.integers(0, 2))
            inp = floats(rng, shape, dt)
            red = str(rng.choice(["sum", "prod", "mean", "amax", "amin"]))
            if not peer_raises(lambda: torch.from_numpy(inp).scatter_reduce(dim, torch.from_numpy(index), torch.from_numpy(src), red)):
                continue
            return Case("scatter_reduce", "err%d_%s" % (i, kind), {"dim": dim, "reduce": red, "include_self": True},
                        {"input": inp, "index": index, "src": src}, {}, check="error", call="scatter_reduce raises")
        if kind.startswith("diag"):
            shape = [int(v) for v in rng.integers(1, 5, int(rng.integers(2, 4)))]
            d1, d2 = 0, 1
            if kind == "diag_same_dims":
                d2 = d1
            inp = torch.from_numpy(floats(rng, shape, dt))
            dshape = list(torch.diagonal(inp, 0, 0, 1).shape)
            if kind == "diag_src":
                dshape[-1] += 1
            src = torch.from_numpy(floats(rng, dshape, dt))
            if not peer_raises(lambda: torch.diagonal_scatter(inp, src, 0, d1, d2)):
                continue
            return Case("diagonal_scatter", "err%d_%s" % (i, kind), {"offset": 0, "dim1": d1, "dim2": d2},
                        {"input": inp.numpy(), "src": src.numpy()}, {}, check="error", call="diagonal_scatter raises")
        if kind == "tri_neg":
            op = str(rng.choice(["tril_indices", "triu_indices"]))
            row, col = -int(rng.integers(1, 5)), int(rng.integers(0, 5))
            if rng.random() < 0.5:
                row, col = col, row
            f = torch.tril_indices if op == "tril_indices" else torch.triu_indices
            if not peer_raises(lambda: f(row, col, 0)):
                continue
            return Case(op, "err%d_%s_%dx%d" % (i, kind, row, col), {"row": row, "col": col, "offset": 0, "dtype": "int64"},
                        {}, {}, check="error", call="%s raises" % op)
        if kind.startswith("put"):
            shape = [int(v) for v in rng.integers(1, 5, int(rng.integers(1, 4)))]
            axis = int(rng.integers(0, len(shape)))
            ishape = list(shape)
            ishape[axis] = 1
            idx = np.zeros(ishape, np.int64)
            if kind == "put_oob":
                idx.flat[int(rng.integers(0, idx.size))] = shape[axis] + int(rng.integers(0, 3)) if rng.random() < 0.5 else -shape[axis] - 1
            else:
                idx = idx.reshape(idx.shape + (1,))
            arr = floats(rng, shape, dt)
            vals = floats(rng, [1], dt)
            if not peer_raises(lambda: np.put_along_axis(arr.copy(), idx, vals, axis)):
                continue
            return Case("put_along_axis", "err%d_%s" % (i, kind), {"axis": axis}, {"arr": arr, "indices": idx, "values": vals},
                        {}, check="error", call="numpy.put_along_axis raises")
        # sparse: the peers reject a shape mismatch (scipy), an index out of
        # the shape and a malformed CSR (scipy's check_format)
        op = str(rng.choice(list(SPARSE_OPS)))
        r, c = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        if kind in ("coo_oob", "sparse_shape") and rng.random() < 0.5:
            kx = np.array([0, r * c - 1], np.int64)
            xi = np.array(np.unravel_index(kx, (r, c)), np.int64)
            yshape = [r, c + 1] if kind == "sparse_shape" else [r, c]
            if kind == "coo_oob":
                xi[int(rng.integers(0, 2)), 1] = [r, c][int(rng.integers(0, 2))] if rng.random() < 0.7 else -1
                xi = np.ascontiguousarray(xi)
                if not peer_raises(lambda: sp.coo_matrix((np.ones(2), (xi[0], xi[1])), shape=(r, c)).tocsr()):
                    continue
            params = {"format": "coo", "ndim": 2, "shape": [r, c], "dtype": dt} if kind == "coo_oob" else \
                {"format": "coo", "ndim": 2, "x_shape": [r, c], "y_shape": yshape, "dtype": dt}
            return Case(op, "err%d_%s_coo" % (i, kind), params,
                        {"x_indices": xi, "x_values": floats(rng, 2, dt), "y_indices": np.zeros((2, 0), np.int64),
                         "y_values": np.zeros(0, dt)}, {}, check="error", call="scipy rejects")
        crow = np.array([0] + sorted(rng.integers(0, 3, r).cumsum().tolist()), np.int64)
        nnz = int(crow[-1])
        col = np.concatenate([np.sort(rng.choice(c, min(c, crow[k + 1] - crow[k]), replace=False)) for k in range(r)] or [np.zeros(0)]).astype(np.int64)
        crow = np.array([0] + np.cumsum([min(c, crow[k + 1] - crow[k]) for k in range(r)]).tolist(), np.int64)
        nnz = int(crow[-1])
        yshape = [r, c]
        if kind == "csr_col_oob":
            if nnz == 0:
                continue
            col[int(rng.integers(0, nnz))] = c + int(rng.integers(0, 3)) if rng.random() < 0.7 else -1
        elif kind == "csr_crow":
            how = int(rng.integers(0, 3))
            if how == 0:
                crow = crow + 1
            elif how == 1:
                if nnz == 0:
                    continue
                crow[-1] = nnz - 1
            else:
                if r < 2 or nnz == 0:
                    continue
                crow[1], crow[2] = max(crow[1], 1), 0
        else:
            yshape = [r + 1, c]
        vals = floats(rng, nnz, dt)
        if kind != "sparse_shape" and not peer_raises(
                lambda: sp.csr_matrix((vals, col, crow), shape=(r, c)).check_format(full_check=True)):
            continue
        params = {"format": "csr", "ndim": 2, "shape": [r, c], "dtype": dt} if kind != "sparse_shape" else \
            {"format": "csr", "ndim": 2, "x_shape": [r, c], "y_shape": yshape, "dtype": dt}
        ycrow = np.zeros(yshape[0] + 1, np.int64)
        return Case(op, "err%d_%s_csr" % (i, kind), params,
                    {"x_crow": crow, "x_col": col, "x_values": vals, "y_crow": ycrow, "y_col": np.zeros(0, np.int64),
                     "y_values": np.zeros(0, dt)}, {}, check="error", call="scipy rejects")


GENS = {
    "tril_indices": lambda r, i: gen_tri(r, "tril_indices", i),
    "triu_indices": lambda r, i: gen_tri(r, "triu_indices", i),
    "diagonal_scatter": gen_diag,
    "scatter_reduce": gen_scatter_reduce,
    "scatter_reduce_backward": lambda r, i: gen_scatter_reduce(r, i, backward=True),
    "cumsum": gen_cumsum,
    "sort": gen_sort,
    "unique": gen_unique,
    "segment_reduce": gen_segment,
    "compact": gen_compact,
    "put_along_axis": gen_put,
    "scatter": gen_scatter,
    "sparse_coalesce": lambda r, i: gen_convert(r, "sparse_coalesce", i),
    "sparse_to_csr": lambda r, i: gen_convert(r, "sparse_to_csr", i),
    "sparse_to_coo": lambda r, i: gen_convert(r, "sparse_to_coo", i),
    "errors": gen_errors,
}
for _op in list(SPARSE_OPS) + ["sparse_div_backward"]:
    GENS[_op] = (lambda o: lambda r, i: gen_sparse(r, o, i))(_op)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40, help="cases per op")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--op", action="append", help="ops (default: all of %s)" % ", ".join(GENS))
    ap.add_argument("--backend", action="append", help="backends (default opencl and vulkan)")
    ap.add_argument("--plans", choices=["own", "gpu", "both"], default="both",
                    help="the device's own plans, every op planned as for a discrete GPU, or both (default)")
    ap.add_argument("--keep", help="write the cases and outputs here (default: a temporary folder, removed)")
    ap.add_argument("--accel", default=os.path.join(ROOT, "bin", "accel"))
    a = ap.parse_args()
    root = a.keep or tempfile.mkdtemp(prefix="peer_fuzz.")
    cases = os.path.join(root, "cases")
    rng = np.random.default_rng(a.seed)
    for op in a.op or list(GENS):
        for i in range(a.n):
            GENS[op](rng, i).write(cases)
    failed = 0
    runs = [(be, pl) for be in a.backend or ["opencl", "vulkan"]
            for pl in (["own", "gpu"] if a.plans == "both" else [a.plans])]
    for be, pl in runs:
        tag = be if pl == "own" else be + "-gpu-plans"
        outs = os.path.join(root, "out-" + tag)
        env = dict(os.environ)
        env.pop("ACCEL_GPU_PLANS", None)
        if pl == "gpu":
            env["ACCEL_GPU_PLANS"] = "1"
        # one job per case folder, from its manifest
        with open(os.path.join(root, "jobs-%s.jsonl" % tag), "w") as f:
            for op in sorted(os.listdir(cases)):
                for c in sorted(os.listdir(os.path.join(cases, op))):
                    cd = os.path.join(cases, op, c)
                    m = json.load(open(os.path.join(cd, "manifest.json")))
                    f.write(json.dumps({"op": op, "params": m["params"],
                                        "inputs": {k: os.path.join(cd, "in_%s.npy" % k) for k in m["inputs"]},
                                        "out": os.path.join(outs, op, c)}) + "\n")
        r = subprocess.run([a.accel, "run", "--batch", os.path.join(root, "jobs-%s.jsonl" % tag), "--backend", be],
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            print(r.stdout[-3000:], r.stderr[-3000:])
            failed += 1
        c = subprocess.run([sys.executable, os.path.join(ROOT, "testdata", "peer-cases", "check.py"), "--all", cases, outs],
                           capture_output=True, text=True)
        bad = [l for l in c.stdout.splitlines() if not l.startswith("PASS")]
        print("%s: %s" % (tag, c.stdout.strip().splitlines()[-1] if c.stdout.strip() else c.stderr[-500:]))
        for l in bad[:40]:
            print("  " + l)
        failed += c.returncode != 0
    if not a.keep:
        shutil.rmtree(root)
    else:
        print("cases and outputs in", root)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
