"""`torch.backends.cudnn`: accepted and recorded; XLA chooses GPU kernels itself."""

import contextlib

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: jtorch does not call cuDNN directly (XLA may use it underneath)."""
    return False


def version():
    """None, as on a PyTorch build without cuDNN."""
    return None


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Matches `torch.backends.cudnn.flags`: sets the flags inside the block."""
    g = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {n: g[n] for n in names}
    g.update(
        enabled=enabled,
        benchmark=benchmark,
        benchmark_limit=benchmark_limit,
        deterministic=deterministic,
        allow_tf32=allow_tf32,
    )
    try:
        yield
    finally:
        g.update(saved)
