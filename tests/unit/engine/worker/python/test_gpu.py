"""The CUDA paths (skipped without a GPU): NVRTC launches, allocator poison,
CUDA-event timing, kernel profiles, the restart after a broken context, and
the delivered form of an NVRTC candidate (built with load_inline: nvcc and
ninja must be there; a cold build takes about a minute)."""

import unittest

import torch

import fixtures
from fixtures import candidate, src
from hiera_runner import evaluate as ev

HAS_CUDA = torch.cuda.is_available()

KERNELS = fixtures.RELU2_AND_FILL_KERNELS + r'''extern "C" __global__ void reverse_shared(float* p, int n) {
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


# 64 x 256 outputs: reverse_shared needs 64 KiB of dynamic shared memory (over 48 KiB: opted into).
DELIVER_REFERENCE = fixtures.linear_relu_reference(64, 256)

# relu2 (extern "C"), fill<double> (a template, float64/int64 markers) and
# reverse_shared twice (shared memory; the identity): the reference's values.
NVRTC_CANDIDATE = candidate('''
    y = self.lin(x).contiguous()
    out = torch.empty_like(y)
    n = y.numel()
    self.relu2((n + 255) // 256, 256, out, y, n)
    zeros = torch.empty(n, dtype=torch.float64, device=y.device)
    self.fill((n + 127) // 128, (128,), zeros, rt.float64(0.0), rt.int64(n))
    self.reverse(1, 256, out, n, shared_mem=n * 4)
    self.reverse(1, 256, out, n, shared_mem=n * 4)
    return out + zeros.view_as(out).to(out.dtype)
''', init_extra="self.relu2 = rt.compile(KERNELS, 'relu2')\n"
                 "self.fill = rt.compile(KERNELS, 'fill<double>')\n"
                 "self.reverse = rt.compile(KERNELS, 'reverse_shared')",
    imports="from hiera_runner import nvrtc_runtime as rt\nKERNELS = %r" % KERNELS)


def bits(t):
    t = t.detach().contiguous()
    return t.view(torch.int64 if t.element_size() == 8 else torch.int32) if t.is_floating_point() else t


@unittest.skipUnless(HAS_CUDA, "no CUDA device")
class DeliverTest(unittest.TestCase):
    def test_delivered_nvrtc_candidate_passes_in_its_delivered_form(self):
        from hiera_runner import deliver
        self.assertEqual(ev.evaluate(gpu_params(NVRTC_CANDIDATE, DELIVER_REFERENCE))["verdict"], "passed")
        r = deliver.deliver(gpu_params(NVRTC_CANDIDATE, DELIVER_REFERENCE, timing_trials=10))
        self.assertEqual(set(r), {"delivered_source", "evaluation"})
        self.assertEqual(deliver.hiera_imports(r["delivered_source"]), [])
        self.assertNotIn("hiera", r["delivered_source"])
        evaluation = r["evaluation"]
        self.assertEqual(evaluation["verdict"], "passed", evaluation["failures"])
        self.assertEqual(len(evaluation["trials"]), 6)  # five and the second shape
        self.assertEqual(evaluation["timing"]["candidate"]["trials"], 10)

    def test_delivered_outputs_equal_the_nvrtc_form_bit_for_bit(self):
        from hiera_runner import deliver, inputs, loader
        nvrtc_form = loader.load(NVRTC_CANDIDATE, "candidate")
        delivered_form = loader.load(deliver.to_delivered(NVRTC_CANDIDATE), "candidate")
        reference = loader.load(DELIVER_REFERENCE, "reference")
        try:
            models = []
            for form in (nvrtc_form, delivered_form):
                torch.manual_seed(7)
                models.append(form.get("ModelNew")(256).cuda())
            for trial in range(3):
                x = inputs.make(reference.get("get_inputs"), 100 + trial, inputs.distribution_for(trial),
                                torch.device("cuda"))
                a, b = (m(*inputs.clone(x)) for m in models)
                torch.cuda.synchronize()
                self.assertEqual((a.dtype, a.shape), (b.dtype, b.shape))
                self.assertTrue(torch.equal(bits(a), bits(b)), "trial %d differs" % trial)

            # The kernels alone, with every kind of argument.
            from hiera_runner import nvrtc_runtime as rt
            shim = delivered_form.get("_nvrtc_runtime")
            for form_rt in (rt, shim):
                fill = form_rt.compile(KERNELS, "fill<double>")
                p = torch.zeros(5000, dtype=torch.float64, device="cuda")
                fill((5000 + 127) // 128, (128,), p, form_rt.float64(0.1), form_rt.int64(4999))
                torch.cuda.synchronize()
                self.assertTrue(bool((p[:4999] == 0.1).all()) and float(p[4999]) == 0.0)
            outs = []
            x = torch.randn(20000, device="cuda")
            for form_rt in (rt, shim):
                relu2 = form_rt.compile(KERNELS, "relu2")
                reverse = form_rt.compile(KERNELS, "reverse_shared")
                out = torch.empty_like(x)
                relu2((20000 + 255) // 256, 256, out, x, 20000)
                reverse(1, 256, out, 20000, shared_mem=20000 * 4)  # 80 000 bytes
                outs.append(out)
            torch.cuda.synchronize()
            self.assertTrue(torch.equal(bits(outs[0]), bits(outs[1])))
            self.assertTrue(torch.equal(outs[1], (torch.relu(x) * 2).flip(0)))
            with self.assertRaises(TypeError):
                shim.compile(KERNELS, "relu2")(1, 32, torch.empty(32), torch.empty(32), 32)  # a CPU tensor
            with self.assertRaises(RuntimeError) as e:
                shim.compile(KERNELS, "relu2")(1, 32, torch.empty(32, device="cuda"))  # too few arguments
            self.assertIn("takes 3 arguments", str(e.exception))
        finally:
            for m in (nvrtc_form, delivered_form, reference):
                m.unload()

    def test_deliver_job_through_the_runner(self):
        import test_runner_process
        from unittest import mock
        runner = test_runner_process.Runner()
        try:
            with mock.patch.object(test_runner_process, "TIMEOUT_S", 600):  # a cold nvcc build
                reply = runner.call(1, "deliver", gpu_params(NVRTC_CANDIDATE, DELIVER_REFERENCE))
            result = reply["result"]
            self.assertEqual(result["evaluation"]["verdict"], "passed", result["evaluation"])
            self.assertNotIn("restart", result)
        finally:
            runner.close()


@unittest.skipUnless(HAS_CUDA, "no CUDA device")
class CudaIsolationTest(unittest.TestCase):
    def test_an_illegal_address_ends_the_candidates_process_not_the_runners_context(self):
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
            self.assertNotIn("restart", result)
            # The runner's own context is intact: the next candidate is verified and timed on the GPU.
            again = runner.call(2, "evaluate", gpu_params(fixtures.GOOD))["result"]
            self.assertEqual(again["verdict"], "passed", again["failures"])
            self.assertGreater(again["timing"]["candidate"]["median_ms"], 0)
        finally:
            runner.close()

    def test_inputs_and_outputs_cross_in_buffers_of_their_own(self):
        from hiera_runner import exchange, isolation
        proc = isolation.CandidateProcess(torch.device("cuda", 0))
        try:
            proc.wait_ready()
            proc.load(fixtures.GOOD, [8], 1)
            x = torch.rand(4, 8, device="cuda")
            descs, fds, views = proc.stage([x])
            handle = descs[0]["handle"]
            self.assertEqual(len(bytes.fromhex(handle)), 64)
            proc.run((descs, fds, views), 1)
            out = proc.fetch(1 << 20)
            self.assertEqual(out[0].shape, (4, 8))
            self.assertNotEqual(out[0].data_ptr(), x.data_ptr())
            # Our own input handle handed back as an output is refused, not opened.
            with self.assertRaises(exchange.ExchangeError):
                exchange.DeviceBuffer(torch.device("cuda", 0), handle="00" * 64)
        finally:
            proc.close()


if __name__ == "__main__":
    unittest.main()
