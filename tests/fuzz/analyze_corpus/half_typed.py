import torch.nn as nn
class Net(nn.Module):
    def forward(self, x, mask=None):
        q = x @ x.transpose(-2, -1) / 8.0
        a = q.masked_fill(mask, float("-inf")).softmax(-1
        return a @ x
    def helper(self):
        """unterminated
