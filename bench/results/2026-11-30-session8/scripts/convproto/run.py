"""Prototype timing: TF32 implicit-GEMM conv with fused epilogue vs cuDNN eager and torch.compile."""
import os, sys, json, math
import torch
import torch.nn.functional as F
sys.path.insert(0, os.path.join(os.getcwd(), "engine", "worker", "python"))
from hiera_runner import nvrtc_runtime as rt

SRC = open(os.path.join(os.path.dirname(__file__), "conv_tc.cu")).read()
flush = torch.empty(256 << 20, dtype=torch.float32, device="cuda")
SMS = torch.cuda.get_device_properties(0).multi_processor_count


def median_ms(fn, runs=30):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(runs):
        flush.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]


def launcher(cin, cout, k, pad, epi, epilogue, rows, bw, mt, H, W):
    nt = cout // 8
    alpad = (pad + 3) // 4 * 4
    ch = (bw + k - 1 + alpad - pad + 3) // 4
    pr, pc = rows + k - 1, ch * 4
    cs0 = pr * pc
    cs = cs0 + ((8 - cs0 % 32) + 32) % 32
    ksteps = k * k * cin // 8
    smem = 4 * (ksteps * nt * 64 + 2 * cin * cs)
    threads = rows * bw // (mt * 16) * 32
    opts = ["-DCIN=%d" % cin, "-DCOUT=%d" % cout, "-DKH=%d" % k, "-DKW=%d" % k, "-DPAD_H=%d" % pad,
            "-DPAD_W=%d" % pad, "-DROWS=%d" % rows, "-DBW=%d" % bw, "-DMT=%d" % mt, "-DEPI=%d" % epi,
            "-DEPILOGUE=%s" % epilogue, "-std=c++17", "-lineinfo"]
    kern = rt.compile(SRC, "conv_tc", opts)
    per_sm = max(1, min(227 * 1024 // smem, 2048 // threads))
    HO, WO = H + 2 * pad - k + 1, W + 2 * pad - k + 1

    def run(x, w, b, out):
        N = x.shape[0]
        tiles = N * ((HO + rows - 1) // rows) * ((WO + bw - 1) // bw)
        grid = min(tiles, SMS * per_sm)
        kern((grid, 1, 1), (threads, 1, 1), x, w, b, out, rt.int32(N), rt.int32(H), rt.int32(W), rt.int32(HO),
             rt.int32(WO), shared_mem=smem)
    return run, HO, WO, smem, per_sm, threads


def problem(name, N, cin, cout, H, pad, epi, epilogue, torch_epi, configs):
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(cin, cout, 3, padding=pad).cuda()
    x = torch.randn(N, cin, H, H, device="cuda")
    ref_fn = lambda x: torch_epi(conv(x))
    comp = torch.compile(ref_fn)
    res = {"name": name}
    with torch.no_grad():
        ref = ref_fn(x)
        conv64 = torch.nn.Conv2d(cin, cout, 3, padding=pad).cuda().double()
        conv64.load_state_dict(conv.state_dict())
        truth = torch_epi(conv64(x.double()))
        res["eager_err"] = (ref.double() - truth).abs().max().item()
        res["eager"] = median_ms(lambda: ref_fn(x))
        res["cudnn_conv_only"] = median_ms(lambda: conv(x))
        comp(x); comp(x)
        res["compile"] = median_ms(lambda: comp(x))
        res["compile_err"] = (comp(x).double() - truth).abs().max().item()
        for rows, bw, mt in configs:
            tag = "r%d_w%d_m%d" % (rows, bw, mt)
            try:
                run, HO, WO, smem, per_sm, threads = launcher(cin, cout, 3, pad, epi, epilogue, rows, bw, mt, H, H)
                out = torch.full_like(ref, float("nan"))
                run(x, conv.weight, conv.bias, out)
                torch.cuda.synchronize()
                err = (out.double() - truth).abs().max().item()
                vs_ref = (out.double() - ref.double()).abs().max().item()
                ms = median_ms(lambda: run(x, conv.weight, conv.bias, out))
                res[tag] = {"ms": ms, "err_truth": err, "err_eager": vs_ref, "smem": smem, "per_sm": per_sm,
                            "threads": threads, "over_compile": res["compile"] / ms, "over_eager": res["eager"] / ms}
            except Exception as e:
                res[tag] = {"error": str(e)[:2000]}
            print(json.dumps({tag: res[tag]}), flush=True)
    print(json.dumps(res), flush=True)
    return res


CONFIGS = [(4, 64, 2), (8, 32, 2), (8, 64, 2), (16, 32, 2), (4, 32, 2)]
results = []
which = sys.argv[1:] or ["08", "09", "12"]
if "08" in which:
    results.append(problem("08", 64, 16, 64, 256, 0, 1, "v=tanhf(tanhf(v));",
                           lambda y: torch.tanh(torch.tanh(torch.min(y, dim=1, keepdim=True)[0])), CONFIGS))
if "09" in which:
    results.append(problem("09", 32, 32, 64, 256, 1, 0, "v=fminf(fmaxf(v*fminf(fmaxf(v+3.f,0.f),6.f)/6.f,-0.5f),2.f)*1.25f;",
                           lambda y: torch.clamp(F.hardswish(y), -0.5, 2.0) * 1.25, CONFIGS))
if "12" in which:
    results.append(problem("12", 64, 32, 64, 128, 1, 0, "v=v*tanhf(log1pf(expf(v)));v=v*tanhf(log1pf(expf(v)));",
                           lambda y: F.mish(F.mish(y)), CONFIGS))
if "02" in which:
    results.append(problem("02", 32, 64, 128, 128, 1, 0, "v=fmaxf(v,0.f);",
                           lambda y: torch.relu(y), [(2, 64, 2), (4, 64, 2), (2, 128, 4), (4, 32, 2)]))
os.makedirs(os.environ.get("OUT", "/tmp"), exist_ok=True)
json.dump(results, open(os.path.join(os.environ.get("OUT", "/tmp"), "convproto.json"), "w"), indent=1)
