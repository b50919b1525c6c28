"""Matches `torch.distributions.beta` (the module): Beta lives with Dirichlet in jtorch."""

from .dirichlet import Beta

__all__ = ["Beta"]
