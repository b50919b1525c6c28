"""`torch.optim.Rprop`: PyTorch's single-tensor formula."""

from __future__ import annotations

import jax.numpy as jnp

from .. import _tensor
from .optimizer import Optimizer, scalar_like, step_tensor

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Matches `torch.optim.Rprop` (etas, step_sizes, maximize)."""

    _hyper = ("etas", "step_sizes")
    _complex_as_real = True

    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    def _init_state(self, p, group):
        lr = float(group["lr"])
        init = complex(lr, lr) if p.is_complex() else lr
        return {
            "step": step_tensor(),
            "prev": p.detach().new_zeros(p.shape),
            "step_size": _tensor.wrap(jnp.full(p.shape, init, p.grad.dtype.np)),
        }

    def _flags(self, group):
        return (group["maximize"],)

    @staticmethod
    def _update(p, g, state, hp, flags):
        (maximize,) = flags
        etaminus, etaplus = hp["etas"]
        size_min, size_max = hp["step_sizes"]
        if maximize:
            g = -g
        sign = jnp.sign(g * state["prev"])
        factor = jnp.where(
            sign > 0,
            scalar_like(etaplus, p),
            jnp.where(sign < 0, scalar_like(etaminus, p), jnp.ones((), p.dtype)),
        )
        step_size = jnp.clip(
            state["step_size"] * factor, scalar_like(size_min, p), scalar_like(size_max, p)
        )
        # Where the sign flipped, PyTorch zeroes the gradient (and skips the update).
        g = jnp.where(sign < 0, jnp.zeros((), g.dtype), g)
        return p - jnp.sign(g) * step_size, {
            "step": state["step"] + 1,
            "prev": g,
            "step_size": step_size,
        }
