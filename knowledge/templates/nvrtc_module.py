# hiera template: an S3 candidate, a PyTorch module (KernelBench ModelNew)
# whose forward launches its own CUDA kernel. The kernel is compiled by NVRTC
# through hiera_runner.nvrtc_runtime (well under a second, cubin cached by
# hash; no nvcc, no torch headers, no load_inline) and launched on torch's
# current stream, so it is ordered with torch's work and seen by the timer.
#
# Placeholders:
# imports          extra imports (one per line), or nothing
# kernel_source    the CUDA source (e.g. a filled elementwise_fusion.cu); it must not contain three double quotes in a row
# kernel_name      the extern "C" kernel to launch
# compile_options  NVRTC options as Python string literals, e.g. "--use_fast_math"; or nothing
# init_params      Model.__init__'s parameters without self
# init_body        the constructor body, indented 8 spaces, creating parameters as Model does
# forward_params   Model.forward's parameters without self
# forward_body     the forward body, indented 8 spaces: make inputs contiguous and of the kernel's dtype,
#                      allocate the output, launch with self.kernel()(grid, block, *args), return the output.
#                      Tensors pass as pointers, Python ints as int32, floats as float32;
#                      wrap with nvrtc_runtime.int64(n) / nvrtc_runtime.float64(v) for long long / double.
import torch
import torch.nn as nn
import torch.nn.functional as F
from hiera_runner import nvrtc_runtime
{{imports}}

KERNEL_SOURCE = r"""
{{kernel_source}}
"""

_SM_COUNT = {}


def grid_size(n, block, blocks_per_sm=4):
    """Blocks for a grid-stride kernel over n items: enough to fill every SM
    blocks_per_sm times, never more than the items need."""
    device = torch.cuda.current_device()
    if device not in _SM_COUNT:
        _SM_COUNT[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return max(1, min((n + block - 1) // block, _SM_COUNT[device] * blocks_per_sm))


class ModelNew(nn.Module):
    def __init__(self, {{init_params}}):
        super().__init__()
{{init_body}}
        self._kernel = None

    def kernel(self):
        """The compiled kernel, built on first use for the current device."""
        if self._kernel is None:
            self._kernel = nvrtc_runtime.compile(KERNEL_SOURCE, "{{kernel_name}}", options=[{{compile_options}}])
        return self._kernel

    def forward(self, {{forward_params}}):
{{forward_body}}
