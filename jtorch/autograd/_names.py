"""Backward node names: PyTorch's (`AddBackward0`, `MmBackward0`, `SelectBackward0`, ...)."""

from __future__ import annotations

import functools

from .._tensor import Tensor

# Where PyTorch's name is not the op's name in CamelCase + "Backward0".
_NAMES = {
    "__getitem__": "IndexBackward0",
    "linear": "MmBackward0",
    "_upsample_bilinear2d_aa": "UpsampleBilinear2DAaBackward0",
    "_batch_norm_with_update": "BatchNormWithUpdateBackward0",
    "to": "ToCopyBackward0",
    "_to_copy": "ToCopyBackward0",
    "contiguous": "CloneBackward0",
    "cross_entropy": "NllLossBackward0",
    "dropout": "MulBackward0",
    "reshape": "ViewBackward0",
    "flatten": "ViewBackward0",
    "view_as": "ViewBackward0",
    "_index": "IndexBackward0",
    "_select": "SelectBackward0",
    "_slice": "SliceBackward0",
    # PyTorch names the node after the ATen op that does the work.
    "logsigmoid": "LogSigmoidBackward0",
    "relu6": "HardtanhBackward0",
    "selu": "EluBackward0",
    "softsign": "DivBackward0",
    "tanhshrink": "SubBackward0",
    "prelu": "PreluKernelBackward0",
    "layer_norm": "NativeLayerNormBackward0",
    "group_norm": "NativeGroupNormBackward0",
    "_embedding_bag_kernel": "EmbeddingBagBackward0",
    "ndtr": "MulBackward1",
    "grid_sampler_2d": "GridSampler2DBackward0",
    "grid_sampler_3d": "GridSampler3DBackward0",
    # special.*
    "xlog1py": "SpecialXlog1PyBackward0",
    "entr": "SpecialEntrBackward0",
    "erfcx": "SpecialErfcxBackward0",
    "i0e": "SpecialI0EBackward0",
    "i1": "SpecialI1Backward0",
    "i1e": "SpecialI1EBackward0",
    "log_ndtr": "SpecialLogNdtrBackward0",
    "ndtri": "SpecialNdtriBackward0",
    # linalg: torch.det, torch.cross, torch.norm... are the linalg kernels too
    # composites whose last step PyTorch records (torch.masked on NaN/zero-filled input)
    "rms_norm": "MulBackward0",
    "cosine_similarity": "SumBackward1",
    "_lrn_scale": "DivBackward0",
    # fft: PyTorch names the transform kind (real-to-complex, complex-to-real, ...)
    "rfft": "FftR2CBackward0",
    "rfft2": "FftR2CBackward0",
    "rfftn": "FftR2CBackward0",
    "irfft": "FftC2RBackward0",
    "irfft2": "FftC2RBackward0",
    "irfftn": "FftC2RBackward0",
    "hfft": "FftC2RBackward0",
    "hfft2": "FftC2RBackward0",
    "hfftn": "FftC2RBackward0",
    "fft2": "FftC2CBackward0",
    "fftn": "FftC2CBackward0",
    "ifft2": "FftC2CBackward0",
    "ifftn": "FftC2CBackward0",
    "fftshift": "RollBackward0",
    "ifftshift": "RollBackward0",
    # pooling and convolution: PyTorch's 1-d pools run the 2-d kernel and squeeze
    "adaptive_avg_pool2d": "AdaptiveAvgPool2DBackward0",
    "adaptive_avg_pool3d": "AdaptiveAvgPool3DBackward0",
    "adaptive_max_pool2d": "AdaptiveMaxPool2DBackward0",
    "adaptive_max_pool3d": "AdaptiveMaxPool3DBackward0",
    "avg_pool2d": "AvgPool2DBackward0",
    "avg_pool3d": "AvgPool3DBackward0",
    "max_pool2d": "MaxPool2DWithIndicesBackward0",
    "max_pool3d": "MaxPool3DWithIndicesBackward0",
    "max_unpool2d": "MaxUnpool2DBackward0",
    "max_unpool3d": "MaxUnpool3DBackward0",
    "adaptive_avg_pool1d": "SqueezeBackward1",
    "adaptive_max_pool1d": "SqueezeBackward1",
    "avg_pool1d": "SqueezeBackward1",
    "max_pool1d": "SqueezeBackward1",
    "max_unpool1d": "SqueezeBackward1",
    "conv1d": "ConvolutionBackward0",
    "conv2d": "ConvolutionBackward0",
    "conv3d": "ConvolutionBackward0",
    "conv_transpose1d": "ConvolutionBackward0",
    "conv_transpose2d": "ConvolutionBackward0",
    "conv_transpose3d": "ConvolutionBackward0",
}

# Ops whose ATen overloads PyTorch picks by a non-tensor argument, numbered apart, or which
# are one kernel in jtorch and several ATen ops: the node name from the call's static
# arguments `s` (by parameter name) and tensor slots `v`.
_STATIC_NAMES = {
    "interpolate": lambda s, v: _upsample_name(s["mode"], s["antialias"], v[0].ndim - 2),
    "pad": lambda s, v: _pad_name(s["mode"], len(s["pad"]) // 2),
    "fft": lambda s, v: "FftC2CBackward0" if _complex(v[0]) else "FftR2CBackward0",
    # the inverse of a real signal is the conjugate of its forward transform
    "ifft": lambda s, v: "FftC2CBackward0" if _complex(v[0]) else "ConjBackward0",
    "ihfft": lambda s, v: "ConjBackward0",
    "grid_sample": lambda s, v: f"GridSampler{v[0].ndim - 2}DBackward0",
    "unfold": lambda s, v: "Im2ColBackward0",
    "_cross_entropy": lambda s, v: (
        _nll_name(v[0].ndim, s["reduction"])
        if not _floating(v[1])
        else {"mean": "DivBackward1", "sum": "NegBackward0"}.get(s["reduction"], "NegBackward0")
    ),
    "_nll_loss": lambda s, v: _nll_name(v[0].ndim, s["reduction"]),
    # cumprod of [1, x, x, ...], then flipped, or written in place when increasing
    "_gaussian_nll_loss": lambda s, v: _reduced(
        s["reduction"], "AddBackward0" if s["full"] else "MulBackward0"
    ),
    "poisson_nll_loss": lambda s, v: _reduced(
        _legacy_reduction(s), "AddBackward0" if s["full"] else "SubBackward0"
    ),
    "_batch_norm_kernel": lambda s, v: s["node"],  # (named by its caller: native_batch_norm...)
    **{
        f"conv{n}d": functools.partial(
            lambda n, s, v: "SqueezeBackward1" if v[0].ndim == n + 1 else "ConvolutionBackward0", n
        )
        for n in (1, 2, 3)
    },
    **{
        f"conv_transpose{n}d": functools.partial(
            lambda n, s, v: "SqueezeBackward1" if v[0].ndim == n + 1 else "ConvolutionBackward0", n
        )
        for n in (1, 2, 3)
    },
}


def _nll_name(ndim: int, reduction: str) -> str:
    """nll_loss on (N, C, d1, ...) input is the 2-d kernel on a 4-d view of it."""
    if ndim < 3:
        return "NllLossBackward0"
    return "NllLoss2DBackward0" if reduction != "none" or ndim == 4 else "ViewBackward0"


def _reduced(reduction: str, unreduced: str) -> str:
    """The node of a loss reduced by mean() / sum(), or of its last op when not reduced."""
    return {"mean": "MeanBackward0", "sum": "SumBackward0"}.get(reduction, unreduced)


def _legacy_reduction(s: dict) -> str:
    """`reduction`, or what the deprecated size_average / reduce arguments make of it."""
    if s["size_average"] is None and s["reduce"] is None:
        return s["reduction"]
    if s["reduce"] is False:
        return "none"
    return "sum" if s["size_average"] is False else "mean"


def _complex(t) -> bool:
    return isinstance(t, Tensor) and t.dtype.is_complex


def _floating(t) -> bool:
    return isinstance(t, Tensor) and t.dtype.is_floating_point


def _upsample_name(mode: str, antialias: bool, n: int) -> str:
    if mode == "area":  # adaptive average pooling (1-d: the 2-d kernel, then a squeeze)
        return "SqueezeBackward1" if n == 1 else f"AdaptiveAvgPool{n}DBackward0"
    kind = {
        "nearest": "Nearest",
        "nearest-exact": "NearestExact",
        "linear": "Linear",
        "bilinear": "Bilinear",
        "bicubic": "Bicubic",
        "trilinear": "Trilinear",
    }[mode]
    return f"Upsample{kind}{n}D{'Aa' if antialias else ''}Backward0"


def _pad_name(mode: str, n: int) -> str:
    if mode == "constant":
        return "ConstantPadNdBackward0"
    if mode in ("reflect", "replicate"):
        return f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{n}DBackward0"
    return "PadBackward0"  # circular: PyTorch's CopySlices of its in-place wrap


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_"))


@functools.cache
def _full_names() -> dict:
    """OpDef -> its dotted torch name ("linalg.cholesky"), where the short name is shared."""
    from .._ops._opdef import OPS

    return {d: full for full, d in OPS.items() if "." in full}


def node_name(op) -> str:
    full = _full_names().get(op)
    return (
        (_NAMES.get(full) if full is not None else None) or _NAMES.get(op.name) or op.autograd_name
    )


def call_name(op, slot_values, statics=None) -> str:
    """The node name of one call: `node_name`, or the overload's where PyTorch has two
    (`statics`: the kernel's static arguments, in `op.static_names` order)."""
    rule = getattr(op, "node_rule", None)
    if rule is not None and (statics is not None or not rule.reads_statics):
        return rule(slot_values, statics)
    full = _full_names().get(op)
    if full is not None and full in _NAMES:
        return _NAMES[full]
    by_static = _STATIC_NAMES.get(op.name)
    if by_static is not None and statics is not None:
        return by_static(dict(zip(op.static_names, statics)), slot_values)
    if op.name == "linear":
        return _linear_name(slot_values)
    return node_name(op)


def _linear_name(slot_values) -> str:
    """PyTorch's F.linear is addmm/mm on 2-D input, and views around it otherwise."""
    ndim = slot_values[0].ndim
    bias = len(slot_values) > 2 and slot_values[2] is not None
    if ndim == 2:
        return "AddmmBackward0" if bias else "MmBackward0"
    if ndim == 1:
        return "ViewBackward0" if bias else "SqueezeBackward4"
    return "ViewBackward0" if bias else "UnsafeViewBackward0"


def index_name(idx, shape) -> str:
    """`x[0]` is a SelectBackward0, `x[1:]` a SliceBackward0: PyTorch names the last step."""
    name, d = "AliasBackward0", 0
    for i in idx:
        if i is None:
            name = "UnsqueezeBackward0"
            continue
        if isinstance(i, slice):
            if (i.start, i.stop, i.step) != (0, shape[d], 1):
                name = "SliceBackward0"
        else:
            name = "SelectBackward0"
        d += 1
    return name


# The name of the gradient a node's backward returns under `create_graph=True`. PyTorch's
# double backward is its derivatives.yaml formula run on ordinary ops, so that gradient's
# grad_fn is the formula's last op (x ** 2: `grad * (2 * x)` is a MulBackward0; tanh:
# `tanh_backward(grad, result)` a TanhBackwardBackward0). jtorch records the whole backward
# as one node, which takes that name: the name of the first input's gradient that depends on
# the inputs (a tuple gives one per input; None where the formula reads only the incoming
# gradient, as add's). Names read off PyTorch 2.13's graphs; other nodes get
# `<name>Backward`.
_MUL, _DIV = "MulBackward0", "DivBackward0"
_GRAD_NAMES = {
    "PowBackward0": _MUL,
    "PowBackward1": ("WhereBackward0", _MUL),
    "PowBackward2": _MUL,
    "MulBackward0": _MUL,
    "DivBackward0": (_DIV, _MUL),
    "ExpBackward0": _MUL,
    "Exp2Backward0": "MulBackward1",
    "Expm1Backward0": _MUL,
    "LogBackward0": _DIV,
    "Log2Backward0": _DIV,
    "Log10Backward0": _DIV,
    "Log1PBackward0": _DIV,
    "SqrtBackward0": _DIV,
    "RsqrtBackward0": _MUL,
    "ReciprocalBackward0": _MUL,
    "SinBackward0": _MUL,
    "CosBackward0": _MUL,
    "TanBackward0": _MUL,
    "SinhBackward0": _MUL,
    "CoshBackward0": _MUL,
    "AsinBackward0": _DIV,
    "AcosBackward0": _DIV,
    "AtanBackward0": _DIV,
    "Atan2Backward0": _MUL,
    "HypotBackward0": _DIV,
    "ErfBackward0": _MUL,
    "ErfcBackward0": _MUL,
    "AbsBackward0": _MUL,
    "LogitBackward0": _DIV,
    "XlogyBackward0": ("MaskedFillBackward0", _DIV),
    "TanhBackward0": "TanhBackwardBackward0",
    "SigmoidBackward0": "SigmoidBackwardBackward0",
    "ReluBackward0": "ThresholdBackwardBackward0",
    "GeluBackward0": "GeluBackwardBackward0",
    "SiluBackward0": _MUL,
    "MishBackward0": _MUL,
    "SoftplusBackward0": "SoftplusBackwardBackward0",
    "LeakyReluBackward0": "LeakyReluBackwardBackward0",
    "EluBackward0": "EluBackwardBackward0",
    "CeluBackward0": "EluBackwardBackward0",
    "HardtanhBackward0": "HardtanhBackwardBackward0",
    "HardswishBackward0": "HardswishBackwardBackward0",
    "LogSigmoidBackward0": "LogSigmoidBackwardBackward0",
    "SoftmaxBackward0": "SoftmaxBackwardDataBackward0",
    "LogSoftmaxBackward0": "LogSoftmaxBackwardDataBackward0",
    "NllLossBackward0": "NllLossBackwardBackward0",
    "NllLoss2DBackward0": "NllLoss2DBackwardBackward0",
    "UnsqueezeBackward0": "SqueezeBackward1",
    "MseLossBackward0": "MseLossBackwardBackward0",
    "SmoothL1LossBackward0": "SmoothL1LossBackwardBackward0",
    "HuberLossBackward0": "HuberLossBackwardBackward0",
    "NativeLayerNormBackward0": "NativeLayerNormBackwardBackward0",
    "NativeBatchNormBackward0": "NativeBatchNormBackwardBackward0",
    "MmBackward0": "MmBackward0",
    "BmmBackward0": "BmmBackward0",
    "DotBackward0": _MUL,
    "AddmmBackward0": (None, "MmBackward0", "MmBackward0"),
    "AddcmulBackward0": (None, _MUL, _MUL),
    "LinalgVectorNormBackward0": _MUL,
    "VarBackward0": _MUL,
    "StdBackward0": _MUL,
    "VarMeanBackward0": _MUL,
    "StdMeanBackward0": _MUL,
    "LogsumexpBackward0": _MUL,
    "ProdBackward0": _MUL,
    "ProdBackward1": _MUL,
    "DistBackward0": (_MUL, "NegBackward0"),
    # the gradients' own double backward, as PyTorch's chains go on
    "TanhBackwardBackward0": "TanhBackwardBackward0",
    "SigmoidBackwardBackward0": "SigmoidBackwardBackward0",
    "ThresholdBackwardBackward0": "ThresholdBackwardBackward0",
    "GeluBackwardBackward0": _MUL,
    "EluBackwardBackward0": _MUL,
    "SoftplusBackwardBackward0": "MulBackward1",
    "SoftmaxBackwardDataBackward0": "SoftmaxBackwardDataBackward0",
    "LogSoftmaxBackwardDataBackward0": "LogSoftmaxBackwardDataBackward0",
}
_GRAD_NAMES.update(
    {
        "ThresholdBackward0": "ThresholdBackwardBackward0",
        "HardshrinkBackward0": "HardshrinkBackwardBackward0",
        "SoftshrinkBackward0": "SoftshrinkBackwardBackward0",
        "RreluWithNoiseBackward0": "RreluWithNoiseBackwardBackward0",
        "PreluKernelBackward0": "PreluKernelBackwardBackward0",
        "GluBackward0": "GluBackwardBackward0",
        "MaxPool2DWithIndicesBackward0": "MaxPool2DWithIndicesBackwardBackward0",
        "MaxPool3DWithIndicesBackward0": "MaxPool3DWithIndicesBackwardBackward0",
        "AdaptiveMaxPool2DBackward0": "AdaptiveMaxPool2DBackwardBackward0",
        "AdaptiveMaxPool3DBackward0": "AdaptiveMaxPool3DBackwardBackward0",
        "L1LossBackward0": (_MUL, "NegBackward0"),
        "MulBackward1": "MulBackward1",
    }
)
# F.linear is PyTorch's addmm/mm on the transposed weight: the weight's gradient ends in t()
LINEAR_GRAD_NAMES = ("MmBackward0", "TBackward0", None)
# Ops whose gradients' names are not those of their node's name (by jtorch op name):
# cross_entropy's node is nll_loss's, its input's gradient log_softmax's.
GRAD_NAMES_BY_OP = {
    "linear": LINEAR_GRAD_NAMES,
    "_cross_entropy": "LogSoftmaxBackwardDataBackward0",
}

# Nodes whose PyTorch gradient reads the inputs only through masks and indices (clamp's
# `where(mask, grad, 0)`, max's `gather`-like selection, sort's scatter): under
# create_graph=True that gradient has no history in them (requires_grad False when the
# incoming gradient has none). jtorch's backward reads the values to rebuild the mask.
MASKS_ONLY = frozenset(
    {
        "ClampBackward0",
        "ClampBackward1",
        "ClampMinBackward0",
        "ClampMinBackward1",
        "ClampMaxBackward0",
        "ClampMaxBackward1",
        "MaxBackward0",
        "MaxBackward1",
        "MinBackward0",
        "MinBackward1",
        "AmaxBackward0",
        "AminBackward0",
        "MaximumBackward0",
        "MinimumBackward0",
        "FmaxBackward0",
        "FminBackward0",
        "MedianBackward0",
        "MedianBackward1",
        "NanmedianBackward0",
        "NanmedianBackward1",
        "SortBackward0",
        "SortBackward1",
        "TopkBackward0",
        "KthvalueBackward0",
        "ModeBackward0",
        "CummaxBackward0",
        "CumminBackward0",
        "MarginRankingLossBackward0",
        "HingeEmbeddingLossBackward0",
        "NanmeanBackward0",
    }
)

# Nodes whose PyTorch gradient is a function of an input it does not depend on
# (nll_loss_backward(grad, self, target, ...) reads only self's shape): under
# create_graph=True that gradient keeps the input's history, with zero derivative.
FORMULA_READS_INPUTS = frozenset({"NllLossBackward0", "NllLoss2DBackward0"})

# The second order: the names of the gradients of the node recording node `name`'s backward
# (the gradient of its argument i), where they are not `_GRAD_NAMES` of that node's own
# name. PyTorch's formulas reach an input along several paths, summed (AddBackward0), or end
# in another op than the first order's (log: `grad / x`, then `-grad / x**2 * ...`, a
# MulBackward0). A value is one entry for every argument i or a dict by i; an entry is as in
# `_GRAD_NAMES`, by the recording node's arguments (the op's, then the incoming gradients).
# NO_HISTORY: the formula's derivative is zeros without history (hardtanh_backward's in
# `self`, abs's sgn), so the second-order gradient does not require grad.
NO_HISTORY = "no history"
_ADD, _NEG, _T = "AddBackward0", "NegBackward0", "TBackward0"
_GRAD_GRAD_NAMES = {
    "SiluBackward0": _ADD,
    "MishBackward0": _ADD,
    "LinalgVectorNormBackward0": _ADD,
    "LogsumexpBackward0": _ADD,
    "ProdBackward0": _ADD,
    "ProdBackward1": _ADD,
    "VarBackward0": _ADD,
    "VarMeanBackward0": _ADD,
    "StdMeanBackward0": _ADD,
    "StdBackward0": _ADD,
    "AtanBackward0": _ADD,
    "Atan2Backward0": _ADD,
    "DistBackward0": _ADD,
    "LogBackward0": _MUL,
    "Log1PBackward0": _MUL,
    "Log2Backward0": "MulBackward1",
    "Log10Backward0": "MulBackward1",
    "LogSigmoidBackward0": _MUL,
    "HardswishBackward0": "WhereBackward0",
    "NativeLayerNormBackward0": "ViewBackward0",
    "HypotBackward0": {0: (_ADD, _DIV), 1: (_DIV, _ADD)},
    "DivBackward0": {0: (None, _MUL), 1: (_DIV, _ADD)},
    "PowBackward1": {0: ("WhereBackward0", _ADD), 1: (_ADD, _MUL)},
    "MseLossBackward0": {0: ("DivBackward1", _NEG), 1: (_NEG, "DivBackward1")},
    "HuberLossBackward0": {0: ("DivBackward1", _NEG), 1: (_NEG, "DivBackward1")},
    "SmoothL1LossBackward0": {0: ("DivBackward1", _NEG), 1: (_NEG, "DivBackward1")},
    "MmBackward0": {0: (None, _T), 1: (_T,)},
    "BmmBackward0": {0: (None, _T), 1: (_T,)},
    "AddmmBackward0": {1: (None, None, _T), 2: (None, _T)},
    "AddcmulBackward0": "MulBackward1",
    "HardtanhBackward0": NO_HISTORY,
    "AbsBackward0": NO_HISTORY,
    "NllLossBackward0": NO_HISTORY,
    "NllLoss2DBackward0": NO_HISTORY,
    "L1LossBackward0": NO_HISTORY,
    "ThresholdBackward0": NO_HISTORY,
    "HardshrinkBackward0": NO_HISTORY,
    "SoftshrinkBackward0": NO_HISTORY,
    "LeakyReluBackward0": NO_HISTORY,
    "RreluWithNoiseBackward0": NO_HISTORY,
    "MaxPool2DWithIndicesBackward0": NO_HISTORY,
    "MaxPool3DWithIndicesBackward0": NO_HISTORY,
    "AdaptiveMaxPool2DBackward0": NO_HISTORY,
    "AdaptiveMaxPool3DBackward0": NO_HISTORY,
}
# F.linear's: the input's gradient (grad @ W) reads the weight, the weight's (grad^T @ x)
# the input through t()
LINEAR_GRAD_GRAD_NAMES = {0: (None, _T), 1: ("MmBackward0",)}


def grad_grad_names(name: str, i: int, linear: bool = False):
    """The second-order entry (see `_GRAD_GRAD_NAMES`) for the gradient of argument `i` of
    a node named `name`; None where `_GRAD_NAMES` applies."""
    spec = LINEAR_GRAD_GRAD_NAMES if linear else _GRAD_GRAD_NAMES.get(name)
    return spec.get(i) if isinstance(spec, dict) else spec


def grad_names(name: str, mask, names=None) -> list:
    """The names of the nodes recording the backward of node `name` under create_graph=True,
    one per gradient it returns (the differentiated inputs `mask`, tuple arguments
    flattened); `names` overrides the table (F.linear's)."""
    names = _GRAD_NAMES.get(name) if names is None else names
    flags = []
    for i, m in enumerate(mask):
        flags.extend((i, bool(x)) for x in m) if isinstance(m, tuple) else flags.append(
            (i, bool(m))
        )
    positions = [i for i, m in flags if m]
    if names is None:
        return [name + "Backward"] * len(positions)
    if isinstance(names, str):
        return [names] * len(positions)
    per = [names[i] if i < len(names) else None for i in positions]
    # a gradient whose formula reads only the incoming gradient joins the first named one
    main = next((n for n in per if n is not None), name + "Backward")
    return [n if n is not None else main for n in per]
