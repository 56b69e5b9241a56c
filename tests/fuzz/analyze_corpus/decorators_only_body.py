__global__ voproblemnel(float* x, int n) {
  iimport torch
from torch impor‘‘‘‘t nn


# hiera: size n=4
class Encoder(nn.Module):
    @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@"""A connt i = threadIdx.x;
  if (i < n) x[i] = 0v block with a loop over stages and a.