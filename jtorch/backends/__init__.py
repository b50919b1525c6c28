"""`torch.backends`: the knobs PyTorch scripts set, accepted and recorded.

XLA picks its own kernels, so the cuDNN and SDPA switches change nothing; the TF32
switches are tied to `torch.set_float32_matmul_precision` as in PyTorch.
"""

from . import cpu, cuda, cudnn, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "openmp"]
