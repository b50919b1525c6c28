"""torch.nn.parallel's parts and torch.cuda.comm on a machine without an accelerator: what
runs without one (structures walked, non-tensors repeated per device) and PyTorch's
CPU-build errors. Several devices: test_distributed_local_devices.py."""

import collections

import pytest

import jtorch as torch
from jtorch.nn import parallel
from jtorch.nn.parallel import comm
from jtorch.nn.parallel.scatter_gather import scatter_kwargs

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU build")


def test_scatter_repeats_what_is_not_a_tensor():
    Point = collections.namedtuple("Point", "x y")
    assert parallel.scatter(("a", 1), [0, 1]) == [("a", 1), ("a", 1)]
    assert parallel.scatter({"k": [None, 2]}, [0, 1, 2]) == [{"k": [None, 2]}] * 3
    assert parallel.scatter(Point(1, "s"), [0, 1]) == [Point(1, "s")] * 2
    assert parallel.scatter((), [0, 1]) == [(), ()]  # an empty tuple is an object


def test_scatter_kwargs_pads_the_shorter_side():
    assert scatter_kwargs((), {"flag": True}, [0, 1]) == (
        ((), ()),
        ({"flag": True}, {"flag": True}),
    )
    assert scatter_kwargs(("a",), {"flag": True}, [0, 1]) == (
        (("a",), ("a",)),
        ({"flag": True}, {"flag": True}),
    )
    assert scatter_kwargs(("a",), None, [0, 1]) == ((("a",), ("a",)), ({}, {}))


def test_gather_and_replicate_without_devices():
    assert parallel.gather([None, None], 0) is None
    assert parallel.replicate(torch.nn.Linear(2, 2), []) == []
    with pytest.raises(AssertionError, match="Gather function not implemented for CPU tensors"):
        parallel.gather([torch.ones(2), torch.ones(2)], 0)


def test_cpu_build_errors():
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        comm.broadcast(torch.ones(2), [0, 1])
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        comm.scatter(torch.ones(4), [0, 1])
    with pytest.raises(AssertionError, match="reduce_add expects all inputs to be on GPUs"):
        comm.reduce_add([torch.ones(2)], 0)
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        parallel.parallel_apply([torch.nn.Linear(2, 2)], [torch.ones(2)])
    with pytest.raises(RuntimeError, match="Exactly one of 'devices' and 'out'"):
        comm.broadcast(torch.ones(2))
    assert torch.cuda.comm.gather is comm.gather
