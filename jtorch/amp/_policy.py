"""Which ops autocast casts, and to what: PyTorch's CPU and CUDA autocast op lists.

`LOWER` ops run in the autocast dtype (their floating inputs are cast down); `FP32` ops
run in float32 (low-precision floating inputs are cast up). float64 inputs are never
touched, as in PyTorch. Names are jtorch's dotted op names; composites are reached
through the ops they call (`cross_entropy` -> `_cross_entropy`). Ops that only promote
(`cat`, `addcmul`, ...) need nothing: the registry's promotion already picks the widest
type.
"""

from __future__ import annotations

LOWER = "lower"
FP32 = "fp32"

_NN = "nn.functional."

_CPU_LOWER = [
    "mm",
    "bmm",
    "matmul",
    "baddbmm",
    "addmm",
    "addbmm",
    "linalg.vecdot",
    "prelu",
    _NN + "linear",
    _NN + "conv1d",
    _NN + "conv2d",
    _NN + "conv3d",
    _NN + "conv_transpose1d",
    _NN + "conv_transpose2d",
    _NN + "conv_transpose3d",
]

_CPU_FP32 = [
    "prod",
    "quantile",
    "nanquantile",
    "_quantile",
    "stft",
    "cdist",
    "trace",
    "polar",
    "view_as_complex",
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
    "inverse",
    "lu_solve",
    "ormqr",
    "pinverse",
    "geqrf",
    "qr",
    "svd",
    "triangular_solve",
    "grid_sampler",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "linalg.cholesky",
    "linalg.cholesky_ex",
    "linalg.eig",
    "linalg.eigh",
    "linalg.eigvals",
    "linalg.eigvalsh",
    "linalg.inv",
    "linalg.inv_ex",
    "linalg.lstsq",
    "linalg.qr",
    "linalg.solve",
    "linalg.svd",
    "linalg.svdvals",
    "linalg.tensorinv",
    "linalg.tensorsolve",
    _NN + "avg_pool3d",
    _NN + "max_pool3d",
    _NN + "max_pool3d_with_indices",
    _NN + "max_unpool2d",
    _NN + "max_unpool3d",
    _NN + "adaptive_avg_pool3d",
    _NN + "adaptive_max_pool3d",
    _NN + "fractional_max_pool2d",
    _NN + "fractional_max_pool3d",
    "_fractional_max_pool",
    _NN + "binary_cross_entropy",
    _NN + "mse_loss",
    _NN + "cosine_embedding_loss",
    "_nll_loss",
    _NN + "hinge_embedding_loss",
    _NN + "poisson_nll_loss",
    _NN + "smooth_l1_loss",
    "_cross_entropy",
    _NN + "l1_loss",
    _NN + "huber_loss",
    _NN + "margin_ranking_loss",
    _NN + "soft_margin_loss",
    _NN + "triplet_margin_loss",
    _NN + "multi_margin_loss",
    _NN + "ctc_loss",
    "_ctc_loss",
    _NN + "kl_div",
    _NN + "multilabel_margin_loss",
    _NN + "binary_cross_entropy_with_logits",
]

_CUDA_LOWER = [
    "mm",
    "mv",
    "bmm",
    "matmul",
    "baddbmm",
    "addmm",
    "addmv",
    "addr",
    "addbmm",
    "chain_matmul",
    "linalg.multi_dot",
    "linalg.vecdot",
    "prelu",
    _NN + "linear",
    _NN + "conv1d",
    _NN + "conv2d",
    _NN + "conv3d",
    _NN + "conv_transpose1d",
    _NN + "conv_transpose2d",
    _NN + "conv_transpose3d",
]

_CUDA_FP32 = [
    "acos",
    "asin",
    "cosh",
    "erfinv",
    "exp",
    "expm1",
    "log",
    "log10",
    "log2",
    "log1p",
    "reciprocal",
    "rsqrt",
    "sinh",
    "tan",
    "pow",
    _NN + "softplus",
    _NN + "layer_norm",
    "native_layer_norm",
    "group_norm",
    "native_group_norm",
    _NN + "rms_norm",
    "norm",
    "linalg.vector_norm",
    "linalg.matrix_norm",
    "linalg.norm",
    _NN + "cosine_similarity",
    _NN + "poisson_nll_loss",
    _NN + "cosine_embedding_loss",
    "_nll_loss",
    "_cross_entropy",
    _NN + "hinge_embedding_loss",
    _NN + "kl_div",
    _NN + "l1_loss",
    _NN + "smooth_l1_loss",
    _NN + "huber_loss",
    _NN + "mse_loss",
    _NN + "margin_ranking_loss",
    _NN + "multilabel_margin_loss",
    _NN + "soft_margin_loss",
    _NN + "triplet_margin_loss",
    _NN + "multi_margin_loss",
    _NN + "binary_cross_entropy_with_logits",
    "dist",
    _NN + "pdist",
    "cdist",
    "renorm",
    "logsumexp",
    # PyTorch's "fp32_set_opt_dtype" ops: run in float32 when no dtype is given.
    "prod",
    "softmax",
    "log_softmax",
    "cumprod",
    "cumsum",
    "sum",
]

# PyTorch lists scaled_dot_product_attention and runs einsum, tensordot and
# multi_head_attention_forward as composites over bmm/mm/linear, so all of them run in the
# lower dtype on every device; in jtorch each is one kernel.
for _lst in (_CPU_LOWER, _CUDA_LOWER):
    _lst += [
        "tensordot",
        "_kernel:matmul._einsum_kernel",
        "_kernel:matmul._einsum2_kernel",
        "_kernel:nn.attention._sdpa_call",
        "_kernel:nn.attention._mha_call",
    ]

_LISTS = {"cpu": (_CPU_LOWER, _CPU_FP32), "cuda": (_CUDA_LOWER, _CUDA_FP32)}


def _resolve(name: str):
    """The OpDef for a listed name: a registry op, or `_kernel:module.attr` for a kernel."""
    from .._ops._registry import OPS, OpDef

    if name.startswith("_kernel:"):
        import importlib

        mod, _, attr = name[len("_kernel:") :].rpartition(".")
        # No default: a kernel that moved must fail here, not drop out of the table.
        return getattr(importlib.import_module("jtorch._ops." + mod), attr)._op
    d = OPS.get(name)
    return d if isinstance(d, OpDef) else None


_tables: dict = {}


def table(device_type: str) -> dict:
    """{OpDef: LOWER or FP32} for a device type, built on first use."""
    t = _tables.get(device_type)
    if t is None:
        lower, fp32 = _LISTS["cpu" if device_type == "cpu" else "cuda"]
        t = {}
        for names, kind in ((fp32, FP32), (lower, LOWER)):
            for n in names:
                d = _resolve(n)
                if d is not None:
                    t[d] = kind
        _tables[device_type] = t
    return t


def missing(device_type: str) -> list:
    """Listed names that are not registry ops here (for tests)."""
    lower, fp32 = _LISTS[device_type]
    return [n for n in lower + fp32 if _resolve(n) is None]
