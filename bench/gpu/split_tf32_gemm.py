#!/usr/bin/env python3
"""The generalisation suite's float32 GEMMs: cuBLAS float32 beside 3xTF32 (hiera_runner.split_tf32) and TF32.

Every float32 product of the suite's problems (aten mm / addmm / bmm / baddbmm) is collected by running them on
the meta device with tests/generalisation/check_suite.py's loader, and those the s2_split_tf32_gemm rewrite takes
(128 or more a side, 2^27 multiply-adds or more) are kept. On a GPU each distinct shape is then timed side by side
with hiera_runner.timing (CUDA events, L2 flushed, the sides interleaved): torch's float32 product, split_tf32's
(its weight split once, as a module's parameter is; the left operand split on every call), and TF32 alone, which
the contract would have to allow. Each side's error is its largest difference from a float64 product over the
largest float64 value.

usage: split_tf32_gemm.py [--filter REGEX] [--trials N] [--list] [--out FILE.json]

--list prints the shapes and the problems they come from, and needs no GPU.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "engine", "worker", "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "generalisation"))

import torch  # noqa: E402

import check_suite  # noqa: E402  (the suite's loader and meta-device build)

MIN_SIDE = 128        # split_tf32.cpp's kMinSide
MIN_MULTIPLY_ADDS = 1 << 27


def collect(filter_re):
    """{(batch, m, k, n): [problem ids]} of the float32 products the rewrite would take, and the problems
    that could not run on the meta device here (id -> reason)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Products(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.overloadpacket.__name__
            if name in ("mm", "addmm", "bmm", "baddbmm"):
                a, b = (args[1], args[2]) if name in ("addmm", "baddbmm") else (args[0], args[1])
                if a.dtype == torch.float32:
                    batch = a.shape[0] if a.dim() == 3 else 1
                    self.seen.append((int(batch), int(a.shape[-2]), int(a.shape[-1]), int(b.shape[-1])))
            return func(*args, **(kwargs or {}))

    shapes, skipped = {}, {}
    for pid, path in check_suite.discover(filter_re):
        try:
            module = check_suite.load(pid, path)
            model, inputs = check_suite.build_meta(module)
            with torch.no_grad(), Products() as products:
                model(*inputs)
        except Exception as e:  # an op the installed torch cannot run on meta: reported, not fatal
            skipped[pid] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            continue
        for batch, m, k, n in products.seen:
            if min(m, k, n) >= MIN_SIDE and batch * m * k * n >= MIN_MULTIPLY_ADDS:
                users = shapes.setdefault((batch, m, k, n), [])
                if pid not in users:
                    users.append(pid)
    return shapes, skipped


def relative_error(y, exact):
    return float((y.double() - exact).abs().max() / exact.abs().max())


def measure(shape, trials):
    from hiera_runner import split_tf32, timing
    batch, m, k, n = shape
    torch.manual_seed(0)
    device = torch.device("cuda")
    matmul = torch.backends.cuda.matmul
    if batch == 1:
        a = torch.randn(m, k, device=device)
        w = torch.nn.Parameter(torch.randn(n, k, device=device) / math.sqrt(k), requires_grad=False)
        float32 = lambda: torch.nn.functional.linear(a, w)  # noqa: E731
        split = lambda: split_tf32.linear(a, w)  # noqa: E731
        exact = torch.nn.functional.linear(a.double(), w.double())
    else:
        a = torch.randn(batch, m, k, device=device)
        w = torch.nn.Parameter(torch.randn(batch, k, n, device=device) / math.sqrt(k), requires_grad=False)
        float32 = lambda: torch.matmul(a, w)  # noqa: E731
        split = lambda: split_tf32.matmul(a, w)  # noqa: E731
        exact = torch.matmul(a.double(), w.double())

    def tf32():
        previous = matmul.allow_tf32
        matmul.allow_tf32 = True
        try:
            return float32()
        finally:
            matmul.allow_tf32 = previous

    with torch.no_grad():
        errors = {"float32": relative_error(float32(), exact), "split_tf32": relative_error(split(), exact),
                  "tf32": relative_error(tf32(), exact)}
        stats = timing.time_sides([("float32", float32), ("split_tf32", split), ("tf32", tf32)], device, trials)
    ms = {side: round(s["median_ms"], 4) for side, s in stats.items()}
    tflops = {side: round(2.0 * batch * m * k * n / (t * 1e-3) / 1e12, 1) for side, t in ms.items()}
    return {"ms": ms, "tflops": tflops, "split_over_float32": round(ms["float32"] / ms["split_tf32"], 3),
            "relative_error": errors}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--filter", help="regular expression over group/name")
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--list", action="store_true", help="print the shapes and stop (no GPU needed)")
    ap.add_argument("--out", help="write the record as JSON here")
    args = ap.parse_args()
    shapes, skipped = collect(re.compile(args.filter) if args.filter else None)
    for pid, why in sorted(skipped.items()):
        print("skipped %s: %s" % (pid, why), file=sys.stderr)
    rows = []
    for shape in sorted(shapes, key=lambda s: -(s[0] * s[1] * s[2] * s[3])):
        row = {"batch": shape[0], "m": shape[1], "k": shape[2], "n": shape[3], "problems": shapes[shape]}
        if not args.list:
            row.update(measure(shape, args.trials))
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.list:
        return 0
    record = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "trials": args.trials,
              "commit": os.environ.get("HIERA_COMMIT") or subprocess.run(
                  ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
              "skipped": skipped, "shapes": rows}
    if rows:
        record["geomean_split_over_float32"] = round(
            math.exp(sum(math.log(r["split_over_float32"]) for r in rows) / len(rows)), 3)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
