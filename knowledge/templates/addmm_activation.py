# hiera template: an S2 candidate, linear + bias + ReLU/GELU as one cuBLASLt
# call: torch._addmm_activation puts the bias and the activation in the GEMM
# epilogue (CUBLASLT_EPILOGUE_RELU_BIAS / GELU_BIAS), so the M x N output is
# written once instead of written, re-read and re-written by separate bias and
# activation kernels. On CUDA its GELU is the tanh approximation: use it only
# where the reference computes F.gelu(..., approximate="tanh").
#
# Placeholders:
# imports         extra imports (one per line), or nothing
# init_params     Model.__init__'s parameters without self
# init_body       the constructor body, indented 8 spaces; the nn.Linear layers are created exactly as in
#                     Model (same order and shapes), so that the same seed gives the same weights
# forward_params  Model.forward's parameters without self
# forward_body    the forward body, indented 8 spaces, calling linear_activation(x, self.<linear>, use_gelu)
import torch
import torch.nn as nn
import torch.nn.functional as F
{{imports}}


def linear_activation(x, linear, use_gelu):
    """act(linear(x)) for x of shape [..., in_features] in one cuBLASLt call;
    act is ReLU, or tanh-approximated GELU when use_gelu."""
    x2d = x.reshape(-1, x.shape[-1])
    if not x2d.is_contiguous():
        x2d = x2d.contiguous()
    y = torch._addmm_activation(linear.bias, x2d, linear.weight.t(), use_gelu=use_gelu)
    return y.reshape(*x.shape[:-1], linear.out_features)


class ModelNew(nn.Module):
    def __init__(self, {{init_params}}):
        super().__init__()
{{init_body}}

    def forward(self, {{forward_params}}):
{{forward_body}}
