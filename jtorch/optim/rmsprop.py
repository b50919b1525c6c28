"""`torch.optim.RMSprop`: PyTorch's single-tensor formula."""

from __future__ import annotations

import jax.numpy as jnp

from .adam import lerp
from .optimizer import Optimizer, scalar_like, step_tensor

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Matches `torch.optim.RMSprop` (alpha, centered, momentum, weight_decay, maximize)."""

    _hyper = ("lr", "alpha", "eps", "weight_decay", "momentum")
    _complex_as_real = True

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    def _init_state(self, p, group):
        state = {"step": step_tensor(), "square_avg": p.detach().new_zeros(p.shape)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = p.detach().new_zeros(p.shape)
        if group["centered"]:
            state["grad_avg"] = p.detach().new_zeros(p.shape)
        return state

    def _flags(self, group):
        return (
            group["maximize"],
            group["weight_decay"] != 0,
            group["momentum"] > 0,
            group["centered"],
        )

    @staticmethod
    def _update(p, g, state, hp, flags):
        maximize, decay, use_momentum, centered = flags
        alpha = hp["alpha"]
        if maximize:
            g = -g
        new_state = {"step": state["step"] + 1}
        if decay:
            g = g + scalar_like(hp["weight_decay"], p) * p
        square_avg = state["square_avg"] * scalar_like(alpha, p) + scalar_like(1 - alpha, p) * g * g
        new_state["square_avg"] = square_avg
        if centered:
            grad_avg = lerp(state["grad_avg"], g, scalar_like(1 - alpha, p))
            new_state["grad_avg"] = grad_avg
            avg = jnp.sqrt(square_avg + -grad_avg * grad_avg)
        else:
            avg = jnp.sqrt(square_avg)
        avg = avg + scalar_like(hp["eps"], p)
        if use_momentum:
            buf = state["momentum_buffer"] * scalar_like(hp["momentum"], p) + g / avg
            new_state["momentum_buffer"] = buf
            p = p + scalar_like(-hp["lr"], p) * buf
        else:
            p = p + scalar_like(-hp["lr"], p) * g / avg
        return p, new_state
