"""`torch.backends.cpu`."""


def get_cpu_capability() -> str:
    """XLA compiles for the host CPU; "DEFAULT" is PyTorch's name for no SIMD dispatch."""
    return "DEFAULT"
