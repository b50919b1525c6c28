"""Matches `torch.distributions.constraints`: the sets parameters and samples live in.

A constraint's `check(value)` returns a bool tensor over the batch dimensions (its
`event_dim` rightmost dimensions are reduced). Reprs are PyTorch's (they appear in the
validation error messages): the class name without its leading underscore.
"""

import jtorch as torch

__all__ = [
    "Constraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "independent",
    "integer_interval",
    "interval",
    "half_open_interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "MixtureSameFamilyConstraint",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_semidefinite",
    "positive_definite",
    "positive_integer",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


class Constraint:
    """Matches `torch.distributions.constraints.Constraint`."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a support that depends on other parameters; cannot be checked."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(
            is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
            event_dim=self._event_dim if event_dim is NotImplemented else event_dim,
        )

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Matches `constraints.is_dependent`."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is a dependent constraint on the class, a computed value on objects."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """`base_constraint` with `reinterpreted_batch_ndims` more dimensions reduced by all()."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(
                f"base_constraint must be a Constraint, got {type(base_constraint).__name__}"
            )
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise AssertionError(
                f"reinterpreted_batch_ndims must be >= 0, got {reinterpreted_batch_ndims}"
            )
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return result.reshape(tuple(result.shape[: result.dim() - n]) + (-1,)).all(-1)

    def __repr__(self):
        return (
            f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"
        )


class MixtureSameFamilyConstraint(Constraint):
    """The component constraint, checked with the mixture dimension added back."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(
                f"base_constraint must be a Constraint, got {type(base_constraint).__name__}"
            )
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        keep = value.dim() - self.event_dim
        return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & value.sum(-1).eq(1)


class _Bounded(Constraint):
    """Shared repr of the interval-like constraints: `Name(lower_bound=.., upper_bound=..)`."""

    _fields = ()

    def __repr__(self):
        args = ", ".join(f"{f}={getattr(self, f)}" for f in self._fields)
        return f"{type(self).__name__[1:]}({args})"


class _IntegerInterval(_Bounded):
    is_discrete = True
    _fields = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerLessThan(_Bounded):
    is_discrete = True
    _fields = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)


class _IntegerGreaterThan(_Bounded):
    is_discrete = True
    _fields = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Real(Constraint):
    def check(self, value):
        return value == value  # false exactly at NaN


class _GreaterThan(_Bounded):
    _fields = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value


class _GreaterThanEq(_Bounded):
    _fields = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound <= value


class _LessThan(_Bounded):
    _fields = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound


class _Interval(_Bounded):
    _fields = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Bounded):
    _fields = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return torch.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative counts summing to at most `upper_bound` (PyTorch checks no integrality)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


def _all_last2(mask):
    return mask.reshape(tuple(mask.shape[:-2]) + (-1,)).all(-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return _all_last2(value.tril() == value)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return _all_last2(value.tril() == value) & positive_diagonal


class _CorrCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        tol = torch.finfo(value.dtype).eps * value.size(-1) * 10
        row_norm = torch.linalg.norm(value.detach(), dim=-1)
        return _LowerCholesky().check(value) & (row_norm - 1.0).abs().le(tol).all(dim=-1)


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return torch.full(
            tuple(value.shape[:-2]),
            value.shape[-2] == value.shape[-1],
            dtype=torch.bool,
            device=value.device,
        )


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not square.all():
            return square
        return torch.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not sym.all():
            return sym
        return torch.linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not sym.all():
            return sym
        return torch.linalg.cholesky_ex(value).info.eq(0)


class _Cat(Constraint):
    """Constraints `cseq` on consecutive slices (of `lengths`) along `dim`, as torch.cat."""

    def __init__(self, cseq, dim=0, lengths=None):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})"
            )
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for c, length in zip(self.cseq, self.lengths):
            checks.append(c.check(value.narrow(self.dim, start, length)))
            start += length
        return torch.cat(checks, self.dim)


class _Stack(Constraint):
    """Constraints `cseq` on the slices along `dim`, as torch.stack."""

    def __init__(self, cseq, dim=0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        parts = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return torch.stack([c.check(v) for v, c in zip(parts, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
