"""Matches `torch.distributions.transforms`: invertible maps between constrained spaces.

A transform maps x in its `domain` to y in its `codomain`; `inv` is the inverse transform,
`log_abs_det_jacobian(x, y)` the log |dy/dx| summed over the transform's event dims. With
`cache_size=1` the last (x, y) pair is remembered, so `t.inv(t(x))` returns `x` itself.
"""

import math
from numbers import Number

import jtorch as torch
import jtorch.nn.functional as F

from . import constraints
from .utils import (
    _sum_rightmost,
    broadcast_all,
    lazy_property,
    tril_matrix_to_vec,
    vec_to_tril_matrix,
)

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


class Transform:
    """Matches `torch.distributions.transforms.Transform`."""

    bijective = False

    def __init__(self, cache_size: int = 0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 1:
            self._cached_x_y = (None, None)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__ + "()"

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform (what `t.inv` returns)."""

    def __init__(self, transform: Transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """`parts` applied in order; the log-Jacobians add up (summed to the widest event)."""

    def __init__(self, parts, cache_size: int = 0):
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for p in reversed(self.parts):
            event_dim = max(
                event_dim + p.domain.event_dim - p.codomain.event_dim, p.domain.event_dim
            )
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for p in self.parts:
            event_dim = max(
                event_dim + p.codomain.event_dim - p.domain.event_dim, p.codomain.event_dim
            )
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @lazy_property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        if self._inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            inv._inv = self
            self._inv = inv
        return self._inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return torch.zeros_like(x)
        xs = [x]
        for p in self.parts[:-1]:
            xs.append(p(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for p, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(
                _sum_rightmost(p.log_abs_det_jacobian(a, b), event_dim - p.domain.event_dim)
            )
            event_dim += p.codomain.event_dim - p.domain.event_dim
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def forward_shape(self, shape):
        for p in self.parts:
            shape = p.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for p in reversed(self.parts):
            shape = p.inverse_shape(shape)
        return shape

    def __repr__(self):
        return type(self).__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """`base_transform` with `reinterpreted_batch_ndims` more dimensions in its event."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size
        )

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(
            self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims
        )

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost `in_shape` dimensions to `out_shape` (Jacobian 1)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = torch.Size(in_shape)
        self.out_shape = torch.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = x.shape[: x.dim() - len(self.in_shape)]
        return x.reshape(batch + self.out_shape)

    def _inverse(self, y):
        batch = y.shape[: y.dim() - len(self.out_shape)]
        return y.reshape(batch + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(x.shape[: x.dim() - len(self.in_shape)])

    @staticmethod
    def _swap(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return torch.Size(shape[:cut]) + new

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)


class _Elementwise(Transform):
    """A parameter-free transform: all instances of one class are equal."""

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = object.__hash__


class ExpTransform(_Elementwise):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(
            self.exponent.eq(other.exponent).all().item()
        )

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return torch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    inverse_shape = forward_shape


def _clipped_sigmoid(x):
    finfo = torch.finfo(x.dtype)
    return torch.clamp(torch.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)


class SigmoidTransform(_Elementwise):
    """y = sigmoid(x), kept inside (0, 1) in floating point."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        finfo = torch.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(_Elementwise):
    """y = log(1 + exp(x))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class TanhTransform(_Elementwise):
    """y = tanh(x); the Jacobian uses a stable form of log(1 - tanh(x)^2)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return torch.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(_Elementwise):
    """y = |x| (not bijective; the inverse picks the positive root)."""

    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, with `event_dim` dimensions in an event."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, Number) and isinstance(b, Number):
                if a != b:
                    return False
            elif not bool((a == b).all().item()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Number):
            s = float(self.scale)
            return 1 if s > 0 else -1 if s < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        if isinstance(self.scale, Number):
            result = torch.full_like(x, math.log(abs(self.scale)))
        else:
            result = torch.abs(self.scale).log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[: -self.event_dim]) + (-1,)).sum(-1)
            shape = shape[: -self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return torch.broadcast_shapes(
            shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())
        )

    inverse_shape = forward_shape


class CorrCholeskyTransform(Transform):
    """An unconstrained vector of D(D-1)/2 reals to the Cholesky factor of a correlation
    matrix (tanh, then stick-breaking on each row)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = torch.finfo(x.dtype).eps
        x = torch.tanh(x).clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        remaining = (1 - r**2).sqrt().cumprod(-1)
        r = r + torch.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * F.pad(remaining[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        left = F.pad((1 - torch.cumsum(y * y, dim=-1))[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        left = tril_matrix_to_vec(1 - (y * y).cumsum(dim=-1), diag=-2)
        stick = 0.5 * left.log().sum(-1)
        tanh = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return torch.Size(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return torch.Size(shape[:-2]) + (d * (d - 1) // 2,)


def _need_last_dim(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")


class SoftmaxTransform(_Elementwise):
    """Softmax over the last dimension (not bijective: the inverse is log)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _need_last_dim(shape)
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(_Elementwise):
    """K-1 reals to a point of the K-simplex by stick breaking (bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    @staticmethod
    def _offset(x, n):
        # log(K - k) for k = 1..K-1 shifts the logits so that x = 0 maps to the centre.
        return n + 1 - x.new_ones(n).cumsum(-1)

    def _call(self, x):
        z = _clipped_sigmoid(x - self._offset(x, x.shape[-1]).log())
        rest = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(rest, [1, 0], value=1)

    def _inverse(self, y):
        head = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(head.shape[-1]).cumsum(-1)
        left = torch.clamp(1 - head.cumsum(-1), min=torch.finfo(y.dtype).tiny)
        return head.log() - left.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        x = x - self._offset(x, x.shape[-1]).log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _need_last_dim(shape)
        return torch.Size(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _need_last_dim(shape)
        return torch.Size(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(_Elementwise):
    """A square matrix to a lower-triangular one with a positive (exponentiated) diagonal."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_Elementwise):
    """A square matrix to L L^T, L its LowerCholeskyTransform."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(torch.linalg.cholesky(y))


def _check_dim(name, t, dim):
    if not -t.dim() <= dim < t.dim():
        raise AssertionError(f"dim {dim} out of range for {name} with {t.dim()} dimensions")


class CatTransform(Transform):
    """Transforms `tseq` on consecutive slices (of `lengths`) along `dim`, as torch.cat."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})"
            )
        self.dim = dim

    @lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, name, t):
        _check_dim(name, t, self.dim)
        if t.size(self.dim) != self.length:
            raise AssertionError(
                f"{name}.size({self.dim}) = {t.size(self.dim)} must equal length {self.length}"
            )
        out, start = [], 0
        for length in self.lengths:
            out.append(t.narrow(self.dim, start, length))
            start += length
        return out

    def _call(self, x):
        parts = self._slices("x", x)
        return torch.cat([t(p) for t, p in zip(self.transforms, parts)], dim=self.dim)

    def _inverse(self, y):
        parts = self._slices("y", y)
        return torch.cat([t.inv(p) for t, p in zip(self.transforms, parts)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = []
        for t, a, b in zip(self.transforms, self._slices("x", x), self._slices("y", y)):
            term = t.log_abs_det_jacobian(a, b)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return torch.cat(terms, dim=dim) if dim < 0 else sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Transforms `tseq` on the slices along `dim`, as torch.stack."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, name, t):
        _check_dim(name, t, self.dim)
        if t.size(self.dim) != len(self.transforms):
            raise AssertionError(
                f"{name}.size({self.dim}) = {t.size(self.dim)} must equal "
                f"len(transforms) {len(self.transforms)}"
            )
        return [t.select(self.dim, i) for i in range(t.size(self.dim))]

    def _call(self, x):
        return torch.stack(
            [t(p) for t, p in zip(self.transforms, self._slices("x", x))], dim=self.dim
        )

    def _inverse(self, y):
        return torch.stack(
            [t.inv(p) for t, p in zip(self.transforms, self._slices("y", y))], dim=self.dim
        )

    def log_abs_det_jacobian(self, x, y):
        return torch.stack(
            [
                t.log_abs_det_jacobian(a, b)
                for t, a, b in zip(self.transforms, self._slices("x", x), self._slices("y", y))
            ],
            dim=self.dim,
        )

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """A distribution's cdf as a transform to the unit interval."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
