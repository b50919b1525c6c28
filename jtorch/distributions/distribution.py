"""Matches `torch.distributions.Distribution`: the base class of every distribution."""

import warnings

import jtorch as torch

from . import constraints
from .utils import _all_true, lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Matches `torch.distributions.Distribution`.

    Args:
        batch_shape: the shape over which parameters are batched.
        event_shape: the shape of a single sample.
        validate_args: check parameters and values against their constraints (default:
            `Distribution.set_default_validate_args`, on unless Python runs with -O).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turns argument validation on or off for distributions created afterwards."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=torch.Size(), event_shape=torch.Size(), validate_args=None):
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with "
                    "`validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param), lazy_property
                ):
                    continue
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}"
                    )

    def expand(self, batch_shape, _instance=None):
        """A distribution whose parameters are expanded to `batch_shape` (no copies)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=torch.Size()):
        """A sample of shape `sample_shape + batch_shape + event_shape`, without gradient."""
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=torch.Size()):
        """A reparameterized sample: gradients flow to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int):
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample(torch.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return torch.exp(self.entropy())

    def _extended_shape(self, sample_shape=torch.Size()):
        return torch.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """Checks `value`'s shape against batch and event shapes, and that it is in support."""
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.dim() - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: "
                f"{value.size()} vs {self._event_shape}."
            )
        actual = value.size()
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual} vs {expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample "
                "validation. Please initialize the distribution with "
                "`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        if not _all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, batch_shape, _instance, names):
        """`expand` for a distribution whose parameters `names` all have shape batch_shape;
        parameters not computed yet (lazy probs/logits) stay lazy."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = torch.Size(batch_shape)
        param = self.__dict__.get("_param")
        for name in names:
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(batch_shape))
                if param is not None and self.__dict__[name] is param:
                    new._param = new.__dict__[name]  # the parameter it was built from
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names
        )
        return f"{type(self).__name__}({args})"
