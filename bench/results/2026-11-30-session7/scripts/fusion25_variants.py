"""fusion/25 delivered forms side by side: eager, torch.compile, the rounding kernel, the float-intermediates kernel."""
import importlib.util, json, os, sys
import torch
sys.path.insert(0, "engine/worker/python")
from hiera_runner import timing, verify

def load(v):
    spec = importlib.util.spec_from_file_location("c25_" + v, "tmp_exp/c25/%s_delivered.py" % v)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
mods = {v: load(v) for v in ("exact", "f32")}
m = mods["exact"]
torch.manual_seed(0)
ref = m.Model(*m.get_init_inputs()).cuda()
cands = {}
for v, mod in mods.items():
    c = mod.ModelNew(*mod.get_init_inputs()).cuda(); c.load_state_dict(ref.state_dict()); cands[v] = c
out = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__}
tol = verify.Tolerance({})
with torch.no_grad():
    for seed, scale in ((1, 1.0), (2, 4.0)):
        torch.manual_seed(seed)
        args = [(a * scale).cuda() for a in m.get_inputs()]
        want = ref(*args)
        for v, c in cands.items():
            problems = verify.compare(verify.flatten(want), verify.flatten(c(*args)), tol, False, verify.Stats())
            out["check_%s_seed%d" % (v, seed)] = problems[0][1] if problems else "ok"
            out["max_abs_%s_seed%d" % (v, seed)] = (c(*args).float() - want.float()).abs().max().item()
    compiled = torch.compile(ref)
    for _ in range(3): compiled(*args)
    sides = [("eager", lambda: ref(*args)), ("compile", lambda: compiled(*args))] + \
            [(v, (lambda c=c: c(*args))) for v, c in cands.items()]
    t = timing.time_sides(sides, torch.device("cuda"), 60)
    out["ms"] = {k: {"median": round(s["median_ms"], 4), "p10": round(s["p10_ms"], 4), "p90": round(s["p90_ms"], 4)} for k, s in t.items()}
    for v in cands:
        out["%s_over_compile" % v] = round(t["compile"]["median_ms"] / t[v]["median_ms"], 3)
        out["%s_over_eager" % v] = round(t["eager"]["median_ms"] / t[v]["median_ms"], 3)
print(json.dumps(out, indent=1))
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "c25.json"), "w"), indent=1)
