"""Batch normalization: `BatchNorm1d/2d/3d`, their lazy forms, `SyncBatchNorm`."""

from __future__ import annotations

from ... import empty, int64, ones, tensor, zeros
from ...autograd import grad_mode
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = [
    "BatchNorm1d",
    "LazyBatchNorm1d",
    "BatchNorm2d",
    "LazyBatchNorm2d",
    "BatchNorm3d",
    "LazyBatchNorm3d",
    "SyncBatchNorm",
]


class _NormBase(Module):
    """What batch and instance norm share: affine parameters and running statistics."""

    # Version 2 added `num_batches_tracked`; older checkpoints lack it.
    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (
                    self.num_batches_tracked
                    if self.num_batches_tracked is not None
                    else tensor(0, dtype=int64)
                )
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class _BatchNorm(_NormBase):
    def _momentum_for_step(self) -> float:
        """Counts the batch; the averaging factor of this step (cumulative when momentum=None)."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        return factor

    def forward(self, input):
        self._check_input_dim(input)
        factor = self._momentum_for_step()
        # In eval mode, batch statistics are used only when there are no running ones.
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_running else None,
            self.running_var if use_running else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """Lazy batch/instance norm: `num_features` is the input's dim 1 at the first call."""

    def __init__(
        self,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with grad_mode.no_grad():
                self.num_features = input.shape[1]
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


def _dims_check(allowed: tuple, what: str):
    def check(self, input) -> None:
        if input.dim() not in allowed:
            raise ValueError(f"expected {what} input (got {input.dim()}D input)")

    return check


class BatchNorm1d(_BatchNorm):
    """Matches `torch.nn.BatchNorm1d`: over (N, C) or (N, C, L) inputs."""

    _check_input_dim = _dims_check((2, 3), "2D or 3D")


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """Matches `torch.nn.LazyBatchNorm1d`."""

    cls_to_become = BatchNorm1d
    _check_input_dim = _dims_check((2, 3), "2D or 3D")


class BatchNorm2d(_BatchNorm):
    """Matches `torch.nn.BatchNorm2d`: over (N, C, H, W) inputs."""

    _check_input_dim = _dims_check((4,), "4D")


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """Matches `torch.nn.LazyBatchNorm2d`."""

    cls_to_become = BatchNorm2d
    _check_input_dim = _dims_check((4,), "4D")


class BatchNorm3d(_BatchNorm):
    """Matches `torch.nn.BatchNorm3d`: over (N, C, D, H, W) inputs."""

    _check_input_dim = _dims_check((5,), "5D")


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """Matches `torch.nn.LazyBatchNorm3d`."""

    cls_to_become = BatchNorm3d
    _check_input_dim = _dims_check((5,), "5D")


class SyncBatchNorm(_BatchNorm):
    """Matches `torch.nn.SyncBatchNorm` on a single process: plain batch norm.

    jtorch has no process groups, so there is never anything to synchronise with
    (PyTorch also falls back to `F.batch_norm` when the world size is 1).
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group=None,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Matches `torch.nn.SyncBatchNorm.convert_sync_batchnorm`: swaps every batch norm."""
        out = module
        if isinstance(module, _BatchNorm):
            out = SyncBatchNorm(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
                bias=module.bias is not None,
            )
            if module.affine:
                with grad_mode.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
