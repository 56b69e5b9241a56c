"""Shared sources and helpers for the hiera_runner tests (CPU, small tensors)."""

import json
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", ".."))
PACKAGE_DIR = os.path.join(ROOT, "engine", "worker", "python")
if PACKAGE_DIR not in sys.path:  # run_tests.sh sets PYTHONPATH; a bare `unittest discover` works too
    sys.path.insert(0, PACKAGE_DIR)


def src(text):
    return textwrap.dedent(text).lstrip("\n")


def linear_relu_reference(batch, n):
    """A KernelBench-format reference: Linear -> ReLU -> *2 on a (batch, n) input."""
    return src('''
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.lin = nn.Linear(n, n)

            def forward(self, x):
                return torch.relu(self.lin(x)) * 2.0

        def get_inputs():
            return [torch.rand(%d, %d)]

        def get_init_inputs():
            return [%d]
    ''' % (batch, n, n))


REFERENCE = linear_relu_reference(4, 8)

# The same computation rewritten (addmm + clamp, one fewer intermediate): passes.
GOOD = src('''
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.lin = nn.Linear(n, n)

        def forward(self, x):
            y = torch.addmm(self.lin.bias, x, self.lin.weight.t())
            return y.clamp_min(0.0).mul(2.0)
''')


# Two kernels of one source, an extern "C" one and a template: the NVRTC
# launches of test_gpu.py and the delivered form of test_deliver.py.
RELU2_AND_FILL_KERNELS = r'''
extern "C" __global__ void relu2(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] > 0.f ? 2.f * x[i] : 0.f;
}
template <typename T>
__global__ void fill(T* p, T v, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
'''


def candidate(forward_body, init_extra="", imports=""):
    """A ModelNew with the reference's parameters and the given forward body
    (which may use `self.lin` and `x`)."""
    body = textwrap.indent(textwrap.dedent(forward_body).strip("\n"), " " * 8)
    extra = textwrap.indent(textwrap.dedent(init_extra).strip("\n"), " " * 8) if init_extra else ""
    return ("import torch\nimport torch.nn as nn\n%s\n\nclass ModelNew(nn.Module):\n"
            "    def __init__(self, n):\n        super().__init__()\n        self.lin = nn.Linear(n, n)\n"
            "%s\n\n    def forward(self, x):\n%s\n" % (imports, extra, body))


def task(candidate_source, reference_source=REFERENCE, **extra):
    t = {"kind": "pytorch", "reference": {"source": reference_source},
         "candidate": {"source": candidate_source}, "device": "cpu"}
    t.update(extra)
    return t


def params(candidate_source, reference_source=REFERENCE, trials=5, timing_trials=3, seed=1234, task_extra=None,
           **extra):
    p = {"task": task(candidate_source, reference_source, **(task_extra or {})), "trials": trials,
         "timing_trials": timing_trials, "seed": seed}
    p.update(extra)
    return p


def frame(obj):
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(rid, method, params=None):
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg
