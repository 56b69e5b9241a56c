"""hiera's PyTorch runner: `python3 -m hiera_runner` serves the worker job
protocol (engine/eval/JOB_PROTOCOL.md) for kind "pytorch" tasks on its stdio.

Candidates may use `from hiera_runner import nvrtc_runtime` to compile and
launch CUDA kernels without nvcc or the torch headers. Importing the package
imports nothing heavy (torch is loaded by the modules that need it).
"""

WORKER_VERSION = "0.1.0"
