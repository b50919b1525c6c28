"""`torch.optim.SparseAdam`: Adam restricted to the gradient's non-zero entries.

jtorch has no sparse layout, so gradients are dense, and the entries PyTorch
would hold in a sparse COO gradient are taken to be the non-zero ones: only
those entries of the moments and the parameter are updated. That is exactly
PyTorch's result for `grad.to_sparse()`. (PyTorch itself refuses dense
gradients; jtorch accepts them, since they are its only kind.)
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp

from ..autograd import grad_mode
from .optimizer import Optimizer, _hyper_value, scalar_like

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Matches `torch.optim.SparseAdam` (masked Adam; state `step` is a Python int)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def step(self, closure=None):
        """Matches `torch.optim.SparseAdam.step`."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            beta1, beta2 = group["betas"]
            lr = float(group["lr"])
            step_sizes = []
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = p.detach().new_zeros(p.shape)
                    state["exp_avg_sq"] = p.detach().new_zeros(p.shape)
                state["step"] += 1
                step = state["step"]
                # A Python double, as in PyTorch.
                step_sizes.append(lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step))
            states = [self.state[p] for p in params]
            hp = {k: _hyper_value(group[k]) for k in ("betas", "eps")}
            new_p, new_m, new_v = _sparse_adam(
                hp, step_sizes, group.get("maximize", False), [p._array for p in params],
                [p.grad._array for p in params], [s["exp_avg"]._array for s in states],
                [s["exp_avg_sq"]._array for s in states])
            with grad_mode.no_grad():
                for p, s, a, m, v in zip(params, states, new_p, new_m, new_v):
                    p._write(a)
                    s["exp_avg"]._write(m)
                    s["exp_avg_sq"]._write(v)
        return loss


@functools.partial(jax.jit, static_argnums=2)
def _sparse_adam(hp, step_sizes, maximize, params, grads, exp_avgs, exp_avg_sqs):
    beta1, beta2 = hp["betas"]
    out_p, out_m, out_v = [], [], []
    for step_size, p, g, m, v in zip(step_sizes, params, grads, exp_avgs, exp_avg_sqs):
        if maximize:
            g = -g
        mask = g != 0
        m_update = (g - m) * scalar_like(1 - beta1, p)
        v_update = (g * g - v) * scalar_like(1 - beta2, p)
        denom = jnp.sqrt(v_update + v) + scalar_like(hp["eps"], p)
        new_p = p + scalar_like(-step_size, p) * ((m_update + m) / denom)
        out_p.append(jnp.where(mask, new_p, p))
        out_m.append(jnp.where(mask, m + m_update, m))
        out_v.append(jnp.where(mask, v + v_update, v))
    return out_p, out_m, out_v
