"""`torch.cuda.graphs`: CUDA graph capture, which jtorch does not have.

XLA already compiles whole programs; the way to get what a CUDA graph gives (one launch for a
step) is `torch.compile` (`jtorch.compile`), which runs the step as one `jax.jit` program.
Capture APIs raise with that advice; the queries answer that nothing is being captured.
"""

from __future__ import annotations

_ADVICE = (
    "CUDA graphs are not available in jtorch: XLA compiles whole programs instead. Use "
    "torch.compile(fn) (jtorch.compile) to run a step as one compiled program."
)


def is_current_stream_capturing() -> bool:
    """Matches `torch.cuda.is_current_stream_capturing`: jtorch never captures."""
    return False


def graph_pool_handle():
    raise RuntimeError(_ADVICE)


class CUDAGraph:
    """Matches `torch.cuda.CUDAGraph` in name; constructing one raises (see the module)."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError(_ADVICE)


class graph:
    """Matches `torch.cuda.graph` in name; entering a capture raises (see the module)."""

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        raise RuntimeError(_ADVICE)


def make_graphed_callables(
    callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None
):
    raise RuntimeError(_ADVICE)
