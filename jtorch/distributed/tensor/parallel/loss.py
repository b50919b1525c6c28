"""`loss_parallel`: cross-entropy over logits sharded on the class dimension."""

from __future__ import annotations

import contextlib

from ..experimental import implicit_replication

__all__ = ["loss_parallel"]


@contextlib.contextmanager
def loss_parallel():
    """Inside, `F.cross_entropy`/`nll_loss` take DTensor logits (sharded on the class
    dimension) with plain targets; over one rank the loss is the unsharded one."""
    with implicit_replication():
        yield
