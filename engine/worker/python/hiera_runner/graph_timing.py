"""Each node's time in the reference's forward, for the report's regions.

The traced graph is run by an fx Interpreter that puts every node in a
torch.profiler record_function range, warmed up once, then profiled over a
few calls: a node's time is the device time of the kernels launched inside
its range (on CUDA) or the CPU time spent in it (on the CPU), per call, in
milliseconds. Only the reference runs here (trusted code). A failure leaves
the graph without times: times inform the report, never a verdict.
"""

import torch
import torch.fx

CALLS = 3
_PREFIX = "hiera_node:"


class _RangedInterpreter(torch.fx.Interpreter):
    def run_node(self, n):
        if n.op in ("placeholder", "output", "get_attr"):
            return torch.fx.Interpreter.run_node(self, n)
        with torch.profiler.record_function(_PREFIX + n.name):
            return torch.fx.Interpreter.run_node(self, n)


def _device_of(args):
    for a in args:
        if isinstance(a, torch.Tensor):
            return a.device
    return torch.device("cpu")


def _on_device(event):
    kind = getattr(event, "device_type", None)
    return kind is not None and str(kind).split(".")[-1] != "CPU"


def _event_ms(event, cuda):
    if cuda:
        # torch 2.x names it device_time_total; torch 1.x cuda_time_total.
        total = getattr(event, "device_time_total", None)
        if total is None:
            total = getattr(event, "cuda_time_total", 0.0)
        return float(total) / 1000.0
    return float(event.cpu_time_total) / 1000.0


def node_times(gm, args, calls=CALLS):
    """{node name: milliseconds a call} for gm's call nodes, or {} when the
    graph cannot be run this way."""
    from torch.profiler import ProfilerActivity, profile as torch_profile
    device = _device_of(args)
    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    try:
        with torch.no_grad():
            _RangedInterpreter(gm).run(*args)  # warm-up: lazy initialisation, cuBLAS handles
            if cuda:
                torch.cuda.synchronize(device)
            with torch_profile(activities=activities) as prof:
                for _ in range(calls):
                    _RangedInterpreter(gm).run(*args)
                if cuda:
                    torch.cuda.synchronize(device)
        totals = {}
        for event in prof.events():
            # On CUDA kineto also records each range on the device ("gpu_user_annotation"): counting the CPU-side
            # range (its kernels and its children's) once is the node's device time.
            if _on_device(event):
                continue
            if event.name.startswith(_PREFIX):
                name = event.name[len(_PREFIX):]
                totals[name] = totals.get(name, 0.0) + _event_ms(event, cuda)
    except Exception:  # never a capture failure
        return {}
    return {name: ms / calls for name, ms in totals.items()}
