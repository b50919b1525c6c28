"""Matches `torch.distributions.chi2` (the module): Chi2 lives with Gamma in jtorch."""

from .gamma import Chi2

__all__ = ["Chi2"]
