"""Matches `torch.distributions.transforms`: invertible maps between constrained spaces.

A transform maps x in its `domain` to y in its `codomain`; `inv` is the inverse transform,
`log_abs_det_jacobian(x, y)` the log |dy/dx| summed over the transform's event dims. With
`cache_size=1` the last (x, y) pair is remembered, so `t.inv(t(x))` returns `x` itself.

The classes live in `_transform.py` (the base classes), `_elementwise_transforms.py`,
`_event_transforms.py` (onto the simplex, Cholesky factors, positive-definite matrices) and
`_structural_transforms.py` (compose, independent, reshape, cat, stack); this module is their
public home, as PyTorch's, so their `__module__` (what reprs and pickles name) is this one.
"""

from ._elementwise_transforms import (
    AbsTransform,
    AffineTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
)
from ._event_transforms import (
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)
from ._structural_transforms import (
    CatTransform,
    ComposeTransform,
    IndependentTransform,
    ReshapeTransform,
    StackTransform,
    identity_transform,
)
from ._transform import Transform, _InverseTransform

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftplusTransform",
    "TanhTransform",
    "SoftmaxTransform",
    "StackTransform",
    "StickBreakingTransform",
    "Transform",
    "identity_transform",
]


for _cls in (*(globals()[_n] for _n in __all__ if _n != "identity_transform"), _InverseTransform):
    _cls.__module__ = __name__
del _cls
