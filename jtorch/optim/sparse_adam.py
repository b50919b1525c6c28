"""`torch.optim.SparseAdam`: Adam restricted to the entries of sparse COO gradients.

PyTorch's algorithm on its own terms: each step coalesces the gradient and updates the
moments and the parameter at the gradient's entries only (`sparse_mask`, sparse adds);
dense gradients are refused, as PyTorch refuses them.
"""

from __future__ import annotations

import math

from ..autograd import grad_mode
from .optimizer import Optimizer

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
        complex_params = [
            [i, j]
            for i, group in enumerate(self.param_groups)
            for j, p in enumerate(group["params"])
            if p.is_complex()
        ]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not "
                "support complex parameters"
            )

    def step(self, closure=None):
        """Matches `torch.optim.SparseAdam.step`."""
        from ..sparse import sparse_coo_tensor

        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, maximize = group["lr"], group["eps"], group.get("maximize", False)
            with grad_mode.no_grad():
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not p.grad.is_sparse:
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, "
                            "please consider Adam instead"
                        )
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["exp_avg"] = p.detach().new_zeros(p.shape)
                        state["exp_avg_sq"] = p.detach().new_zeros(p.shape)
                    state["step"] += 1
                    grad = p.grad.coalesce()
                    if maximize:
                        grad = -grad
                    idx, values = grad._indices(), grad._values()
                    if values.numel() == 0:
                        continue
                    size = grad.shape
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]

                    def make_sparse(v, idx=idx, size=size):
                        return sparse_coo_tensor(idx, v, size)

                    old_avg = exp_avg.sparse_mask(grad)._values()
                    avg_update = values.sub(old_avg).mul(1 - beta1)
                    exp_avg.add_(make_sparse(avg_update))
                    old_sq = exp_avg_sq.sparse_mask(grad)._values()
                    sq_update = values.pow(2).sub(old_sq).mul(1 - beta2)
                    exp_avg_sq.add_(make_sparse(sq_update))
                    numer = avg_update.add(old_avg)
                    denom = sq_update.add(old_sq).sqrt().add(eps)
                    step = state["step"]
                    # Python doubles, as in PyTorch
                    step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
                    p.add_(make_sparse(numer.div(denom).mul(-step_size)))
        return loss
