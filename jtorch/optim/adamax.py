"""`torch.optim.Adamax`: PyTorch's single-tensor formula."""

from __future__ import annotations

import jax.numpy as jnp

from .adam import _check, lerp
from .optimizer import Optimizer, scalar_like, step_tensor

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Matches `torch.optim.Adamax` (Adam with the infinity norm)."""

    _hyper = ("lr", "betas", "eps", "weight_decay")
    _complex_as_real = True

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(float(lr), eps, betas, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
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
        return {
            "step": step_tensor(),
            "exp_avg": p.detach().new_zeros(p.shape),
            "exp_inf": p.detach().new_zeros(p.shape),
        }

    def _flags(self, group):
        return (group["maximize"], group["weight_decay"] != 0)

    @staticmethod
    def _update(p, g, state, hp, flags):
        maximize, decay = flags
        beta1, beta2 = hp["betas"]
        if maximize:
            g = -g
        step = state["step"] + 1
        if decay:
            g = g + scalar_like(hp["weight_decay"], p) * p
        exp_avg = lerp(state["exp_avg"], g, scalar_like(1 - beta1, p))
        exp_inf = jnp.maximum(
            state["exp_inf"] * scalar_like(beta2, p), jnp.abs(g) + scalar_like(hp["eps"], p)
        )
        # clr is a Python double in PyTorch: lr / (1 - beta1 ** step).
        clr = hp["lr"] / (1 - jnp.asarray(beta1, jnp.float64) ** step.astype(jnp.float64))
        new_p = p + scalar_like(-clr, p) * exp_avg / exp_inf
        return new_p, {"step": step, "exp_avg": exp_avg, "exp_inf": exp_inf}
