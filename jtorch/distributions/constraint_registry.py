"""Matches `torch.distributions.constraint_registry`: `biject_to` and `transform_to`.

`biject_to(c)` gives a bijective transform from the reals onto constraint `c` (for HMC-style
reparameterization, where the Jacobian matters); `transform_to(c)` any transform onto `c`
(for optimisation). Both dispatch on the constraint's type; `register` adds entries.
"""

from numbers import Number

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint types to transform factories."""

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """Registers `factory(constraint) -> Transform` for a constraint type or instance."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                "Expected constraint to be either a Constraint subclass or "
                f"instance, but got {constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints"
            ) from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(*cs):
    def deco(factory):
        for c in cs:
            biject_to.register(c, factory)
            transform_to.register(c, factory)
        return factory

    return deco


@_both(constraints.real)
def _to_real(constraint):
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    return transforms.IndependentTransform(
        biject_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims
    )


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    return transforms.IndependentTransform(
        transform_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims
    )


@_both(constraints.positive, constraints.nonnegative)
def _to_positive(constraint):
    return transforms.ExpTransform()


@_both(constraints.greater_than, constraints.greater_than_eq)
def _to_greater_than(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)]
    )


@_both(constraints.less_than)
def _to_less_than(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)]
    )


@_both(constraints.interval, constraints.half_open_interval)
def _to_interval(constraint):
    low, high = constraint.lower_bound, constraint.upper_bound
    if isinstance(low, Number) and low == 0 and isinstance(high, Number) and high == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform(
        [transforms.SigmoidTransform(), transforms.AffineTransform(low, high - low)]
    )


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@_both(constraints.corr_cholesky)
def _to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return transforms.CatTransform(
        [biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths
    )


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return transforms.CatTransform(
        [transform_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths
    )


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
