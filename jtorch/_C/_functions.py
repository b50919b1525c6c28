"""`torch._C._functions`: autograd node classes PyTorch defines in C++."""

from ..autograd.graph import AccumulateGrad  # noqa: F401

__all__ = ["AccumulateGrad"]
