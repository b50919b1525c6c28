"""What the distributed parity tests share: a one-process gloo world under both libraries,
and outcomes (a value, or the exception's type and message) to compare."""

import pytest
import torch

import jtorch
from tests.helpers import free_port


@pytest.fixture
def worlds():
    """A world of one process (rank 0) in PyTorch and in jtorch, for one test."""
    for lib in (torch, jtorch):
        lib.distributed.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1
        )
    yield
    for lib in (torch, jtorch):
        lib.distributed.destroy_process_group()


def outcome(call):
    try:
        return ("ok", call())
    except BaseException as e:  # noqa: BLE001 - the exception itself is compared
        return (type(e).__name__, str(e))
