"""The CUDA paths (skipped without a GPU): NVRTC launches, allocator poison,
CUDA-event timing, kernel profiles, and the restart after a broken context."""

import unittest

import torch

import fixtures
from fixtures import candidate, src
from hiera_runner import evaluate as ev

HAS_CUDA = torch.cuda.is_available()

KERNELS = r'''
extern "C" __global__ void relu2(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] > 0.f ? 2.f * x[i] : 0.f;
}
template <typename T>
__global__ void fill(T* p, T v, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
extern "C" __global__ void reverse_shared(float* p, int n) {
  extern __shared__ float tile[];
  int i = threadIdx.x;
  for (int j = i; j < n; j += blockDim.x) tile[j] = p[j];
  __syncthreads();
  for (int j = i; j < n; j += blockDim.x) p[j] = tile[n - 1 - j];
}
extern "C" __global__ void scribble(float* p) { p[threadIdx.x] = 1.f; }
'''

BIG_REFERENCE = fixtures.linear_relu_reference(512, 256)


def gpu_params(cand, ref=fixtures.REFERENCE, **kw):
    p = fixtures.params(cand, ref, **kw)
    p["task"]["device"] = "cuda"
    return p


@unittest.skipUnless(HAS_CUDA, "no CUDA device")
class NvrtcLaunchTest(unittest.TestCase):
    def test_launch_elementwise_and_template(self):
        from hiera_runner import nvrtc_runtime as rt
        k = rt.compile(KERNELS, "relu2")
        self.assertIs(rt.compile(KERNELS, "relu2"), k)  # cached
        x = torch.randn(1000, device="cuda")
        out = torch.empty_like(x)
        k((1000 + 255) // 256, 256, out, x, 1000)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(out, torch.relu(x) * 2))
        fill = rt.compile(KERNELS, "fill<double>")
        p = torch.zeros(5000, dtype=torch.float64, device="cuda")
        fill((5000 + 127) // 128, (128,), p, rt.float64(0.1), rt.int64(5000))
        torch.cuda.synchronize()
        self.assertTrue(bool((p == 0.1).all()))

    def test_more_than_48k_of_dynamic_shared_memory(self):
        from hiera_runner import nvrtc_runtime as rt
        k = rt.compile(KERNELS, "reverse_shared")
        n = 20000  # 80 000 bytes of shared memory
        p = torch.arange(n, dtype=torch.float32, device="cuda")
        k(1, 256, p, n, shared_mem=n * 4)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(p, torch.arange(n, dtype=torch.float32, device="cuda").flip(0)))

    def test_launch_errors_are_clear(self):
        from hiera_runner import nvrtc_runtime as rt
        k = rt.compile(KERNELS, "scribble")
        with self.assertRaises(rt.CudaError) as e:
            k(1, 4096, torch.empty(4096, device="cuda"))
        self.assertIn("CUDA_ERROR_INVALID_VALUE", str(e.exception))
        with self.assertRaises(TypeError):
            k(1, 32, torch.empty(32))


@unittest.skipUnless(HAS_CUDA, "no CUDA device")
class CudaEvaluateTest(unittest.TestCase):
    def test_good_candidate_passes_with_event_timing(self):
        r = ev.evaluate(gpu_params(fixtures.GOOD, BIG_REFERENCE, timing_trials=20))
        self.assertEqual(r["verdict"], "passed", r["failures"])
        self.assertEqual(r["timing"]["candidate"]["trials"], 20)
        self.assertGreater(r["timing"]["reference"]["median_ms"], 0)

    def test_nvrtc_candidate_passes(self):
        cand = candidate('''
            y = self.lin(x).contiguous()
            out = torch.empty_like(y)
            n = y.numel()
            self.k((n + 255) // 256, 256, out, y, n)
            return out
        ''', init_extra="self.k = rt.compile(KERNELS, 'relu2')",
            imports="from hiera_runner import nvrtc_runtime as rt\nKERNELS = %r" % KERNELS)
        r = ev.evaluate(gpu_params(cand, BIG_REFERENCE))
        self.assertEqual(r["verdict"], "passed", r["failures"])

    def test_unwritten_output_small_and_large(self):
        partial = candidate('''
            y = torch.relu(self.lin(x)) * 2.0
            out = torch.empty_like(y)
            out[: y.shape[0] // 2] = y[: y.shape[0] // 2]
            return out
        ''')
        for ref in (fixtures.REFERENCE, BIG_REFERENCE):
            r = ev.evaluate(gpu_params(partial, ref))
            self.assertEqual(r["verdict"], "failed")
            self.assertIn("unwritten_output", [f["check"] for f in r["failures"]], r["failures"])

    def test_profile_lists_kernels_with_launch_shapes(self):
        from hiera_runner import profile
        r = profile.profile({"task": dict(fixtures.task(fixtures.GOOD, BIG_REFERENCE), device="cuda"),
                             "which": "reference", "calls": 3})
        self.assertTrue(r["kernels"], r)
        launched = [k for k in r["kernels"] if k["grid"]]
        self.assertTrue(launched, r["kernels"])
        self.assertEqual(len(launched[0]["grid"]), 3)
        self.assertEqual(len(launched[0]["block"]), 3)
        self.assertGreater(launched[0]["total_ns"], 0)


@unittest.skipUnless(HAS_CUDA, "no CUDA device")
class CudaRestartTest(unittest.TestCase):
    def test_illegal_address_replies_then_exits_3(self):
        from test_runner_process import Runner
        bad = candidate('''
            y = torch.relu(self.lin(x)) * 2.0
            self.k(1, 32, rt.pointer(16))
            return y
        ''', init_extra="self.k = rt.compile(KERNELS, 'scribble')",
            imports="from hiera_runner import nvrtc_runtime as rt\nKERNELS = %r" % KERNELS)
        runner = Runner()
        try:
            reply = runner.call(1, "evaluate", gpu_params(bad))
            result = reply["result"]
            self.assertEqual(result["verdict"], "failed")
            self.assertEqual(result["failures"][0]["check"], "runtime")
            self.assertTrue(result["restart"])
            self.assertIn("restarts", result["failures"][0]["message"])
            self.assertIsNone(runner.receive())
            self.assertEqual(runner.proc.wait(timeout=60), 3)
        finally:
            runner.close()


if __name__ == "__main__":
    unittest.main()
