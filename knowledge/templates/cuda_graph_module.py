# hiera template: an S2 candidate for launch-bound modules, the forward
# captured once in a CUDA graph and replayed: one graph launch instead of one
# CPU-side launch (5-10 us each) per kernel. Inputs are copied into the
# graph's static buffers and the output is cloned out of its pool, because
# the next replay overwrites it. Captured again when an input's shape, dtype,
# stride or device changes. The forward must not synchronise with the host
# (.item(), .cpu(), data-dependent shapes): capture fails on those.
#
# Placeholders:
# imports         extra imports (one per line), or nothing
# init_params     Model.__init__'s parameters without self
# init_body       the constructor body, indented 8 spaces, creating parameters as Model does
# forward_params  Model.forward's parameters without self
# forward_body    the computation, indented 8 spaces, ending in return (a tensor)
import torch
import torch.nn as nn
import torch.nn.functional as F
{{imports}}


class ModelNew(nn.Module):
    def __init__(self, {{init_params}}):
        super().__init__()
{{init_body}}
        self._graph = None
        self._graph_key = None
        self._static_inputs = None
        self._static_output = None

    def _compute(self, {{forward_params}}):
{{forward_body}}

    @staticmethod
    def _key(inputs):
        return tuple((tuple(t.shape), t.dtype, t.stride(), t.device) if isinstance(t, torch.Tensor) else repr(t)
                     for t in inputs)

    def _capture(self, inputs):
        self._static_inputs = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
        with torch.no_grad():
            for _ in range(2):  # warm-up outside the capture: lazy initialisation, cuBLAS handles, autotuning
                self._compute(*self._static_inputs)
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self._static_output = self._compute(*self._static_inputs)
        self._graph = graph
        self._graph_key = self._key(inputs)

    def forward(self, *inputs):
        if not all(t.is_cuda for t in inputs if isinstance(t, torch.Tensor)):
            return self._compute(*inputs)  # graphs are CUDA-only; the same computation on other devices
        if self._graph is None or self._key(inputs) != self._graph_key:
            self._capture(inputs)
        for static, value in zip(self._static_inputs, inputs):
            if isinstance(static, torch.Tensor):
                static.copy_(value)
        self._graph.replay()
        return self._static_output.clone()
