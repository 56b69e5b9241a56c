# hiera template: an S1/S2 candidate, the reference module rewritten with
# PyTorch operators (and, in S2, the library settings torch exposes), in
# KernelBench form: ModelNew takes the same constructor arguments and forward
# inputs as Model and returns the same outputs.
#
# Placeholders:
# imports         extra imports (one per line), or nothing
# init_params     Model.__init__'s parameters without self, e.g. in_features, out_features; or nothing
# init_body       the constructor body, indented 8 spaces. Create parameters and submodules in the same
#                     order, shapes and types as Model, so that the same seed gives the same weights.
# forward_params  Model.forward's parameters without self, e.g. x, y
# forward_body    the forward body, indented 8 spaces, ending in return
import torch
import torch.nn as nn
import torch.nn.functional as F
{{imports}}


class ModelNew(nn.Module):
    def __init__(self, {{init_params}}):
        super().__init__()
{{init_body}}

    def forward(self, {{forward_params}}):
{{forward_body}}
