"""Matches `torch.distributions.Wishart`."""

import math
import warnings
from numbers import Number

import jtorch as torch

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma function: sum_i digamma(x - i / 2), i < p."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    half = torch.arange(p, dtype=x.dtype, device=x.device).div(2)
    return torch.digamma(x.unsqueeze(-1) - half.expand(x.shape + (-1,))).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=torch.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Matches `torch.distributions.Wishart(df, covariance_matrix=None, precision_matrix=None,
    scale_tril=None)`: samples by the Bartlett decomposition."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None
    ):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or "
                "scale_tril may be specified."
            )
        param = given[0]
        if param.dim() < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional "
                "leading batch dimensions"
            )
        if isinstance(df, Number):
            batch_shape = torch.Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if self.df.le(p - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        matrix_shape = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(matrix_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(matrix_shape)
        else:
            self.precision_matrix = param.expand(matrix_shape)
        if self.df.lt(p).any():
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur "
                "for ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df, batch_shape):
        # Bartlett: the i-th diagonal entry of the factor is sqrt(Chi2(df - i)).
        L = self._unbroadcasted_scale_tril
        offsets = torch.arange(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return Chi2(df=df.unsqueeze(-1) - offsets.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = torch.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = torch.eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return torch.cholesky_solve(eye, L).expand(self._matrix_shape())

    def _df_matrix(self, df):
        return df.view(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = torch.where(factor <= 0, float("nan"), factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=torch.Size()):
        p = self._event_shape[-1]
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        i, j = torch.tril_indices(p, p, offset=-1)
        below = torch.randn(
            torch.Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
            dtype=diag.dtype,
            device=diag.device,
        )
        noise = _put_below(torch.diag_embed(diag), i, j, below)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _singular(self, sample):
        bad = ~self.support.check(sample)
        if self._batch_shape:
            bad = bad.amax(self._batch_dims)
        return bad

    def rsample(self, sample_shape=torch.Size(), max_try_correction=None):
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        # PyTorch flags the samples that *pass* the positive-definite check (and so warns on
        # every call); jtorch redraws the ones that fail it, which is what the code intends.
        is_singular = self._singular(sample)
        if is_singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(sample_shape)
                mask = is_singular.view(
                    is_singular.shape + (1,) * (sample.dim() - is_singular.dim())
                )
                sample = torch.where(mask, sample_new, sample)
                is_singular = self._singular(sample)
                if not is_singular.any():
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (
            -nu * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
            - torch.mvlgamma(nu / 2, p=p)
            + (nu - p - 1) / 2 * torch.linalg.slogdet(value).logabsdet
            - torch.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2
        )

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (
            (p + 1) * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
            + torch.mvlgamma(nu / 2, p=p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return (-self.precision_matrix / 2, (self.df - p - 1) / 2)

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (
            -torch.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p
        ) + torch.mvlgamma(y + (p + 1) / 2, p=p)


def _put_below(noise, i, j, values):
    """`noise` with values[..., k] written at (i[k], j[k]) of each matrix."""
    out = noise.clone()
    out[..., i, j] = values
    return out
