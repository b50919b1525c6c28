"""The loss modules (`L1Loss`, `CrossEntropyLoss`, ..., `CTCLoss`).

Each module stores its options and calls the functional form; `weight` (and
`pos_weight`) are registered as buffers, as PyTorch's `_WeightedLoss` does, so they
appear in `state_dict` and follow `.to()`.
"""

from __future__ import annotations

import math
import warnings
from typing import Callable

from .. import functional as F
from .linear import Linear
from .module import Module

__all__ = [
    "L1Loss",
    "NLLLoss",
    "NLLLoss2d",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "KLDivLoss",
    "MSELoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "HingeEmbeddingLoss",
    "MultiLabelMarginLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "SoftMarginLoss",
    "CrossEntropyLoss",
    "LinearCrossEntropyLoss",
    "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss",
    "MarginRankingLoss",
    "MultiMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "CTCLoss",
]


def _legacy_reduction(size_average, reduce) -> str:
    """PyTorch's `_Reduction.legacy_get_string`, with its deprecation warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        stacklevel=2,
    )
    return ret


class _Loss(Module):
    reduction: str

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(
        self, weight=None, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Matches `torch.nn.L1Loss`."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Matches `torch.nn.MSELoss`."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Matches `torch.nn.NLLLoss`."""

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class NLLLoss2d(NLLLoss):
    """Matches `torch.nn.NLLLoss2d` (deprecated alias of `NLLLoss`)."""

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
            "drop-in replacement and see "
            "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class PoissonNLLLoss(_Loss):
    """Matches `torch.nn.PoissonNLLLoss`."""

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average=None,
        eps: float = 1e-8,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )


class GaussianNLLLoss(_Loss):
    """Matches `torch.nn.GaussianNLLLoss`."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )


class KLDivLoss(_Loss):
    """Matches `torch.nn.KLDivLoss` (`reduction='batchmean'`, `log_target`)."""

    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class BCELoss(_WeightedLoss):
    """Matches `torch.nn.BCELoss`."""

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Matches `torch.nn.BCEWithLogitsLoss`; `weight` and `pos_weight` are buffers."""

    def __init__(
        self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


class HingeEmbeddingLoss(_Loss):
    """Matches `torch.nn.HingeEmbeddingLoss`."""

    def __init__(
        self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Matches `torch.nn.MultiLabelMarginLoss`."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Matches `torch.nn.SmoothL1Loss`."""

    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Matches `torch.nn.HuberLoss`."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_Loss):
    """Matches `torch.nn.SoftMarginLoss`."""

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Matches `torch.nn.CrossEntropyLoss` (class indices or probabilities as targets)."""

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class LinearCrossEntropyLoss(_WeightedLoss):
    """Matches `torch.nn.LinearCrossEntropyLoss`: a bias-free `Linear` fused with the loss."""

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple = (),
        bias: bool = False,
        device=None,
        dtype=None,
        reduction: str = "mean",
        weight=None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options=None,
    ) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # The linear weight is stored 2-D and reshaped in forward, as PyTorch does.
        self.linear = Linear(
            in_features,
            math.prod(out_features, start=num_classes),
            bias=bias,
            device=device,
            dtype=dtype,
        )
        self.options = options

    def forward(self, input, target):
        weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features)
        )
        bias = (
            self.linear.bias.reshape((self.num_classes, *self.out_features))
            if self.linear.bias is not None
            else None
        )
        return F.linear_cross_entropy(
            input,
            weight,
            target,
            linear_bias=bias,
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Matches `torch.nn.MultiLabelSoftMarginLoss`."""

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(
            input, target, weight=self.weight, reduction=self.reduction
        )


class CosineEmbeddingLoss(_Loss):
    """Matches `torch.nn.CosineEmbeddingLoss`."""

    def __init__(
        self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class MarginRankingLoss(_Loss):
    """Matches `torch.nn.MarginRankingLoss`."""

    def __init__(
        self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class MultiMarginLoss(_WeightedLoss):
    """Matches `torch.nn.MultiMarginLoss`."""

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight=None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                f"{weight.dim()}D instead"
            )
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(
            input,
            target,
            p=self.p,
            margin=self.margin,
            weight=self.weight,
            reduction=self.reduction,
        )


class TripletMarginLoss(_Loss):
    """Matches `torch.nn.TripletMarginLoss`."""

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )


def _pairwise_distance_module():
    """PyTorch's default distance for `TripletMarginWithDistanceLoss`: `PairwiseDistance()`."""
    try:
        from .distance import PairwiseDistance
    except ImportError:  # the distance modules are not built yet

        class PairwiseDistance(Module):
            def forward(self, x1, x2):
                return F.pairwise_distance(x1, x2)

    return PairwiseDistance()


class TripletMarginWithDistanceLoss(_Loss):
    """Matches `torch.nn.TripletMarginWithDistanceLoss`."""

    def __init__(
        self,
        *,
        distance_function: Callable | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater "
                f"than 0, got {margin} instead"
            )
        self.distance_function = (
            distance_function if distance_function is not None else _pairwise_distance_module()
        )
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )


class CTCLoss(_Loss):
    """Matches `torch.nn.CTCLoss`."""

    def __init__(
        self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False
    ) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )
