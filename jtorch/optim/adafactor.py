"""`torch.optim.Adafactor`: PyTorch's single-tensor formula (factored second moments)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .adam import lerp
from .optimizer import Optimizer, scalar_like, step_tensor

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Matches `torch.optim.Adafactor` (beta2_decay, eps=(eps1, eps2), d, weight_decay).

    Tensors of two or more dimensions keep row and column factors over their last
    two dimensions (`row_var`, `col_var`); vectors and scalars keep a full
    `variance`. `foreach` is accepted: every step is one compiled multi-tensor update.
    """

    _hyper = ("lr", "beta2_decay", "eps", "d", "weight_decay")

    def __init__(
        self,
        params,
        lr=1e-2,
        beta2_decay=-0.8,
        eps=(None, 1e-3),
        d=1.0,
        weight_decay=0.0,
        *,
        foreach=None,
        maximize=False,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(
            lr=lr,
            beta2_decay=beta2_decay,
            eps=eps,
            d=d,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)

    def _make_plan(self, group, params, flags):
        for p in params:
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
        return super()._make_plan(group, params, flags)

    def _init_state(self, p, group):
        state = {"step": step_tensor()}
        if p.dim() > 1:
            state["row_var"] = p.detach().new_zeros((*p.shape[:-1], 1))
            state["col_var"] = p.detach().new_zeros((*p.shape[:-2], 1, p.shape[-1]))
        else:
            state["variance"] = p.detach().new_zeros(p.shape)
        return state

    def _flags(self, group):
        return (group["maximize"], group["weight_decay"] != 0)

    @staticmethod
    def _update(p, g, state, hp, flags):
        maximize, decay = flags
        lr = hp["lr"]
        eps1, eps2 = hp["eps"]
        if eps1 is None:
            eps1 = float(jnp.finfo(p.dtype).eps)
        if maximize:
            g = -g
        step = state["step"] + 1
        # PyTorch reads the step and the norms back as Python doubles (`.item()`).
        n = step.astype(jnp.float64)
        one_minus_beta2 = n ** hp["beta2_decay"]
        rho = jnp.minimum(lr, 1 / n**0.5)
        rms = jnp.linalg.norm(p).astype(jnp.float64) / p.size**0.5
        alpha = jnp.maximum(eps2, rms) * rho
        if decay:
            p = p * scalar_like(1 - lr * hp["weight_decay"], p)
        weight = scalar_like(one_minus_beta2, p)
        new_state = {"step": step}
        if g.ndim > 1:
            row_mean = jnp.square(jnp.linalg.norm(g, axis=-1, keepdims=True)) / g.shape[-1]
            col_mean = jnp.square(jnp.linalg.norm(g, axis=-2, keepdims=True)) / g.shape[-2]
            row_var = lerp(state["row_var"], row_mean, weight)
            col_var = lerp(state["col_var"], col_mean, weight)
            row_scale = jnp.maximum(jnp.mean(row_var, axis=-2, keepdims=True), scalar_like(eps1, p))
            var_estimate = (row_var * col_var) / row_scale
            new_state.update(row_var=row_var, col_var=col_var)
        else:
            var_estimate = lerp(state["variance"], g * g, weight)
            new_state["variance"] = var_estimate
        # eps1 is squared because the update takes the square root afterwards.
        update = g * jax.lax.rsqrt(jnp.maximum(var_estimate, scalar_like(eps1 * eps1, p)))
        denom = jnp.maximum(
            1.0, jnp.linalg.norm(update).astype(jnp.float64) / (update.size**0.5 * hp["d"])
        )
        return p + scalar_like(-alpha / denom, p) * update, new_state
