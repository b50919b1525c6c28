"""Backward node names: PyTorch's (`AddBackward0`, `MmBackward0`, `SelectBackward0`, ...).

An op's node name is part of its declaration (`node=` in `_ops/_registry.op`, kept on the
`OpDef` as `autograd_name` and `node_rule`); this module reads it for a call, names the
nodes of views by their index, and holds what PyTorch's nodes are known to do under
`create_graph=True` (the names of their gradients' nodes), by node name.
"""

from __future__ import annotations


def node_name(op) -> str:
    """The node name of `op` (an `OpDef`, or an autograd pseudo-op with `autograd_name`)."""
    return op.autograd_name


def call_name(op, slot_values, statics=None) -> str:
    """The node name of one call: the declaration's rule where PyTorch names the node by
    overload, else its fixed name (`statics`: the kernel's static arguments, in
    `op.static_names` order; None where unknown, as in forward-mode AD)."""
    rule = getattr(op, "node_rule", None)
    if rule is not None and (statics is not None or not rule.reads_statics):
        return rule(slot_values, statics)
    return op.autograd_name


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
