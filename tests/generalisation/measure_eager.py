#!/usr/bin/env python3
"""Times every problem of the suite in eager PyTorch (COMPILE=1: under torch.compile) on the GPU (CUDA events, median of N)
and prints it beside the estimate on the file's first line."""
import importlib.util, json, re, sys, time, os
from pathlib import Path
import torch
HERE = Path(__file__).resolve().parent
flt = re.compile(sys.argv[1]) if len(sys.argv) > 1 else None
rows = []
for group in ("patterns", "models"):
    for path in sorted((HERE / group).glob("*.py")):
        pid = f"{group}/{path.stem}"
        if flt and not flt.search(pid):
            continue
        stated = float(re.search(r"~(\d+(?:\.\d+)?) ms", path.read_text().splitlines()[0]).group(1))
        try:
            spec = importlib.util.spec_from_file_location(path.stem, path)
            m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
            torch.manual_seed(0)
            torch.set_default_device("cuda")
            model = m.Model(*m.get_init_inputs()).cuda()
            inputs = [t.cuda() if isinstance(t, torch.Tensor) else t for t in m.get_inputs()]
            torch.set_default_device("cpu")
            if os.environ.get("COMPILE") == "1":
                model = torch.compile(model)
            torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
            with torch.no_grad():
                out = model(*inputs)
                outs = out if isinstance(out, (list, tuple)) else [out]
                finite = all(bool(torch.isfinite(o.float()).all()) for o in outs)
                for _ in range(3): model(*inputs)
                times = []
                for _ in range(10):
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record(); model(*inputs); b.record(); torch.cuda.synchronize()
                    times.append(a.elapsed_time(b))
            times.sort(); ms = times[len(times) // 2]
            peak = torch.cuda.max_memory_allocated() / 1e9
            rows.append(dict(id=pid, ms=round(ms, 3), stated=stated, peak_gb=round(peak, 2), finite=finite))
            print(f"{pid:60s} {ms:8.3f} ms (stated ~{stated:g})  peak {peak:5.2f} GB  finite={finite}", flush=True)
        except Exception as e:
            torch.set_default_device("cpu")
            rows.append(dict(id=pid, error=f"{type(e).__name__}: {e}"))
            print(f"{pid:60s} ERROR {type(e).__name__}: {str(e)[:300]}", flush=True)
        finally:
            for n in ("model", "inputs", "out", "outs"):
                globals().pop(n, None)
            torch.cuda.empty_cache()
out = os.environ.get("OUT")
if out and not flt:
    Path(out, "eager.json").write_text(json.dumps(rows, indent=1))
