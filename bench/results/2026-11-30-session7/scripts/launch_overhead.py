"""Session-6 bests with the old launch path against the same modules with this tree's (tmp_exp/refresh.py),
timed side by side with the reference and torch.compile; CPU cost per call with the GPU kept busy."""
import glob, os, sys, time, json, importlib.util
import torch
sys.path.insert(0, "engine/worker/python")
from hiera_runner import timing

def load(path, tag):
    spec = importlib.util.spec_from_file_location("m_%s_%s" % (tag, os.path.basename(path)[:2]), path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

def cpu_cost(fn, calls=30):
    torch.cuda.synchronize()
    torch.cuda._sleep(int(3e9))
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return round(t, 1)

out = {}
only = sys.argv[1:]
for path in sorted(glob.glob("tmp_exp/bests_new/*.py")):
    name = os.path.basename(path)[:-3]
    if only and not any(name.startswith(o) for o in only):
        continue
    old, new = load(path.replace("bests_new", "bests"), "old"), load(path, "new")
    torch.manual_seed(0)
    ref = old.Model(*old.get_init_inputs()).cuda().eval()
    mods = {}
    for tag, m in (("old", old), ("new", new)):
        c = m.ModelNew(*m.get_init_inputs()).cuda().eval()
        c.load_state_dict(ref.state_dict(), strict=False)
        mods[tag] = c
    torch.manual_seed(1)
    args = [a.cuda() if torch.is_tensor(a) else a for a in old.get_inputs()]
    r = {}
    with torch.no_grad():
        outs = {k: v(*args) for k, v in mods.items()}
        for k in outs:
            a, b = outs["old"], outs[k]
            a = a if isinstance(a, (tuple, list)) else [a]
            b = b if isinstance(b, (tuple, list)) else [b]
            r["same_" + k] = all(torch.equal(x, y) for x, y in zip(a, b))
        for k, v in mods.items():
            r["cpu_us_" + k] = cpu_cost(lambda: v(*args))
        r["cpu_us_ref"] = cpu_cost(lambda: ref(*args))
        compiled = torch.compile(ref)
        for _ in range(3): compiled(*args)
        r["cpu_us_compile"] = cpu_cost(lambda: compiled(*args))
        for k, v in mods.items():
            r["cpu_us_%s_after_compile" % k] = cpu_cost(lambda: v(*args))
        sides = [("reference", lambda: ref(*args)), ("old", lambda: mods["old"](*args)),
                 ("new", lambda: mods["new"](*args)), ("compile", lambda: compiled(*args))]
        t = timing.time_sides(sides, torch.device("cuda"), 60)
        r["ms"] = {k: round(v["median_ms"], 4) for k, v in t.items()}
        r["new_over_compile"] = round(t["compile"]["median_ms"] / t["new"]["median_ms"], 3)
        r["old_over_compile"] = round(t["compile"]["median_ms"] / t["old"]["median_ms"], 3)
        torch._dynamo.reset()
    print(name, json.dumps(r), flush=True)
    out[name] = r
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "overhead2.json"), "w"), indent=1)
