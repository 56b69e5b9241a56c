# eager on H200, estimated: ~3.5 ms (64 x 1024 x 512 input = 134 MB; pointwise Conv1d 512->1024 and 512->512: 69 + 34 GFLOP fp32 ~2 ms; LayerNorm, transposes, GLU, depthwise 31-tap Conv1d, BatchNorm1d, SiLU and the residual ~10 passes of 134-268 MB, cuDNN's depthwise conv1d slower than its bytes; not yet measured)
"""A Conformer convolution module (the ESPnet / torchaudio layout): LayerNorm over features,
transpose to channels first, pointwise nn.Conv1d to 2x channels, nn.GLU over channels,
depthwise nn.Conv1d of 31 taps (padding 15, groups = channels), nn.BatchNorm1d in eval mode with
non-trivial statistics, nn.SiLU, pointwise nn.Conv1d, transpose back, residual add (dropout p=0.1
inactive by self.eval())."""
import torch
import torch.nn as nn

batch_size = 64
time_steps = 1024
channels = 512
kernel_size = 31


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.layer_norm = nn.LayerNorm(channels)
        self.pointwise_conv1 = nn.Conv1d(channels, 2 * channels, 1)
        self.glu = nn.GLU(dim=1)
        self.depthwise_conv = nn.Conv1d(channels, channels, kernel_size, padding=(kernel_size - 1) // 2,
                                        groups=channels)
        self.batch_norm = nn.BatchNorm1d(channels)
        self.activation = nn.SiLU()
        self.pointwise_conv2 = nn.Conv1d(channels, channels, 1)
        self.dropout = nn.Dropout(0.1)
        with torch.no_grad():
            self.batch_norm.running_mean.normal_(0, 0.1)
            self.batch_norm.running_var.uniform_(0.5, 1.5)
            self.batch_norm.weight.uniform_(0.5, 1.5)
            self.batch_norm.bias.normal_(0, 0.1)
        self.eval()

    def forward(self, x):
        residual = x
        x = self.layer_norm(x).transpose(1, 2)
        x = self.glu(self.pointwise_conv1(x))
        x = self.activation(self.batch_norm(self.depthwise_conv(x)))
        x = self.dropout(self.pointwise_conv2(x))
        return residual + x.transpose(1, 2)


def get_inputs():
    return [torch.randn(batch_size, time_steps, channels)]


def get_init_inputs():
    return [channels, kernel_size]
