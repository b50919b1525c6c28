"""`torch.utils.flop_counter`: counting the FLOPs of a forward (and backward) pass.

PyTorch counts at the ATen level: a `TorchDispatchMode` sees the matrix products and
convolutions every call decomposes into, and charges each to the modules running it. jtorch
has no ATen layer, so `FlopCounterMode` is a torch-function mode that charges each torch-level
call with the FLOPs of the ATen ops PyTorch decomposes it into, under the same op names
(`linear` with a bias is `aten.addmm`, a folded 3-d `matmul` is `aten.mm`, `einsum` is
`aten.bmm`, a convolution is `aten.convolution`). Backward FLOPs are charged when the gradient
reaches a counted output inside the mode, with PyTorch's backward formulas (a gradient
`aten.mm` per operand that requires grad, `aten.convolution_backward`). As in PyTorch, only
matrix products, convolutions and accelerator attention count; elementwise work does not.
Modules are tracked with global forward hooks: counts are kept under "Global" and under each
running module's name (the root's class name, then attribute names: `Net.fc`).
"""

from __future__ import annotations

import math
from collections import defaultdict

from ..nn.modules import module as _module
from ..overrides import TorchFunctionMode

__all__ = ["FlopCounterMode", "register_flop_formula"]


class _Op:
    """An ATen op's name, printed as PyTorch prints its overload packet (`aten.mm`)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"aten.{self.name}"

    def __eq__(self, other) -> bool:
        return isinstance(other, _Op) and other.name == self.name

    def __hash__(self) -> int:
        return hash(repr(self))


def _op(name: str):
    from .. import ops

    try:
        return getattr(ops.aten, name)
    except AttributeError:
        return _Op(name)


def _prod(xs) -> int:
    return math.prod(int(x) for x in xs)


def _mm(m: int, k: int, n: int, batch: int = 1) -> int:
    return 2 * batch * m * n * k


def _linear(x, w, b=None):
    if x.dim() < 2:
        return []  # mv/addmv: not counted by PyTorch
    m, k, n = _prod(x.shape[:-1]), x.shape[-1], w.shape[0]
    name = "addmm" if b is not None else "mm"
    return [(name, _mm(m, k, n), [(x, "mm", _mm(m, k, n)), (w, "mm", _mm(m, k, n))])]


def _matmul(a, b):
    if a.dim() < 2 or b.dim() < 2:
        return []  # dot/mv: not counted by PyTorch
    if a.dim() == 2 and b.dim() == 2:
        f = _mm(a.shape[0], a.shape[1], b.shape[1])
        return [("mm", f, [(a, "mm", f), (b, "mm", f)])]
    if a.dim() >= 3 and (b.dim() == 2 or all(s == 1 for s in b.shape[:-2])):
        f = _mm(_prod(a.shape[:-1]), a.shape[-1], b.shape[-1])  # PyTorch folds into one mm
        return [("mm", f, [(a, "mm", f), (b, "mm", f)])]
    batch = _prod(_broadcast(a.shape[:-2], b.shape[:-2]))
    f = _mm(a.shape[-2], a.shape[-1], b.shape[-1], batch)
    return [("bmm", f, [(a, "bmm", f), (b, "bmm", f)])]


def _broadcast(s1, s2) -> tuple:
    n = max(len(s1), len(s2))
    s1, s2 = (1,) * (n - len(s1)) + tuple(s1), (1,) * (n - len(s2)) + tuple(s2)
    return tuple(max(a, b) for a, b in zip(s1, s2))


def _bmm(a, b):
    f = _mm(a.shape[1], a.shape[2], b.shape[2], a.shape[0])
    return [("bmm", f, [(a, "bmm", f), (b, "bmm", f)])]


def _addmm(c, a, b, **kwargs):
    f = _mm(a.shape[0], a.shape[1], b.shape[1])
    return [("addmm", f, [(a, "mm", f), (b, "mm", f)])]


def _baddbmm(c, a, b, **kwargs):
    f = _mm(a.shape[1], a.shape[2], b.shape[2], a.shape[0])
    return [("baddbmm", f, [(a, "bmm", f), (b, "bmm", f)])]


def _einsum(equation, *operands):
    """PyTorch contracts operands pairwise, left to right, each contraction one `bmm`."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs = eq.split("->")[0].split(",")
    if len(operands) < 2 or "..." in eq:
        return []
    if "->" in eq:
        result = set(eq.split("->")[1])
    else:  # implicit output: the indices that appear once
        letters = "".join(lhs)
        result = {c for c in letters if letters.count(c) == 1}
    sizes = {}
    for sub, t in zip(lhs, operands):
        for c, n in zip(sub, t.shape):
            sizes[c] = int(n)
    out = []
    cur = set(lhs[0])
    for i, sub in enumerate(lhs[1:], start=1):
        indices = cur | set(sub)
        out.append(("bmm", 2 * _prod(sizes[c] for c in indices), []))
        later = result.union(*[set(s) for s in lhs[i + 1 :]])
        cur = indices & later  # what the intermediate keeps
    return out


def _conv_flops(x_shape, w_shape, out_shape, transposed: bool) -> int:
    """PyTorch's `conv_flop_count`."""
    batch = x_shape[0]
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filt = w_shape
    return 2 * _prod(conv_shape) * _prod(filt) * batch * c_out * c_in


def _conv(transposed: bool):
    def formula(x, w, *args, _out=None, **kwargs):
        f = _conv_flops(tuple(x.shape), tuple(w.shape), tuple(_out.shape), transposed)
        return [
            ("convolution", f, [(x, "convolution_backward", f), (w, "convolution_backward", f)])
        ]

    formula.needs_output = True
    return formula


def _sdpa(q, k, v, *args, **kwargs):
    if q.device.type == "cpu":
        return []  # PyTorch's CPU kernel is not one the counter knows: 0 FLOPs
    b_h = _prod(q.shape[:-2])
    f = (
        2 * b_h * q.shape[-2] * k.shape[-2] * q.shape[-1]
        + 2 * b_h * q.shape[-2] * k.shape[-2] * v.shape[-1]
    )
    return [("_scaled_dot_product_efficient_attention", f, [])]


def _mha(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """The linears and batched products of PyTorch's `multi_head_attention_forward`."""
    batched = query.dim() == 3
    lq, e = query.shape[0], query.shape[-1]
    lk = key.shape[0]
    bsz = query.shape[1] if batched else 1
    proj = "addmm" if in_proj_bias is not None else "mm"
    out = []
    if not use_separate_proj_weight and query is key and key is value:
        out.append((proj, _mm(lq * bsz, e, 3 * e), []))
    elif not use_separate_proj_weight and key is value:
        out += [(proj, _mm(lq * bsz, e, e), []), (proj, _mm(lk * bsz, e, 2 * e), [])]
    else:
        out += [
            (proj, _mm(lq * bsz, e, e), []),
            (proj, _mm(lk * bsz, e, e), []),
            (proj, _mm(lk * bsz, e, e), []),
        ]
    lk += (1 if bias_k is not None else 0) + (1 if add_zero_attn else 0)
    head = e // num_heads
    if need_weights:
        score = "baddbmm" if attn_mask is not None else "bmm"
        out += [
            (score, _mm(lq, head, lk, bsz * num_heads), []),
            ("bmm", _mm(lq, lk, head, bsz * num_heads), []),
        ]
    out.append(("addmm" if out_proj_bias is not None else "mm", _mm(lq * bsz, e, e), []))
    return out


_FORMULAS = {
    "linear": _linear,
    "matmul": _matmul,
    "__matmul__": _matmul,
    "__rmatmul__": lambda a, b: _matmul(b, a),
    "mm": _matmul,
    "bmm": _bmm,
    "addmm": _addmm,
    "baddbmm": _baddbmm,
    "einsum": _einsum,
    "conv1d": _conv(False),
    "conv2d": _conv(False),
    "conv3d": _conv(False),
    "conv_transpose1d": _conv(True),
    "conv_transpose2d": _conv(True),
    "conv_transpose3d": _conv(True),
    "scaled_dot_product_attention": _sdpa,
    "multi_head_attention_forward": _mha,
}


def register_flop_formula(targets, get_raw: bool = False):
    """Registers a FLOP formula for torch functions (by function or name): the decorated
    `formula(*args, **kwargs)` returns the FLOPs of one call, charged under the function's
    name."""
    targets = targets if isinstance(targets, (list, tuple)) else [targets]

    def register(formula):
        for t in targets:
            name = getattr(t, "__name__", None) or str(t).rpartition(".")[2]
            _FORMULAS[name] = lambda *a, _f=formula, _n=name, **k: [(_n, int(_f(*a, **k)), [])]
        return formula

    return register


class FlopCounterMode(TorchFunctionMode):
    """Matches `torch.utils.flop_counter.FlopCounterMode` (see the module doc)."""

    def __init__(
        self, mods=None, depth: int = 2, display: bool = True, custom_mapping: dict | None = None
    ):
        super().__init__()
        self.flop_counts: dict = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode = None
        self._custom = {
            getattr(k, "__name__", str(k)): v for k, v in (custom_mapping or {}).items()
        }
        self._parents: list = ["Global"]
        self._names: dict = {}
        self._handles: list = []

    # -- results ---------------------------------------------------------------------

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict:
        """`{module name: {op: flops}}`, "Global" holding every count."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None) -> str:
        import tabulate

        depth = self.depth if depth is None else depth
        total = self.get_total_flops()
        rows = []
        for mod, counts in self.flop_counts.items():
            level = mod.count(".") + 1 if mod != "Global" else 0
            if level > depth:
                continue
            n = sum(counts.values())
            rows.append([" " * level + mod, _human(n), f"{100 * n / max(total, 1):.2f}%"])
            rows += [
                [" " * (level + 1) + f" - {op}", _human(v), f"{100 * v / max(total, 1):.2f}%"]
                for op, v in counts.items()
            ]
        return tabulate.tabulate(rows, headers=["Module", "FLOP", "% Total"])

    # -- tracking ------------------------------------------------------------------------

    def __enter__(self):
        self.flop_counts.clear()
        self._parents = ["Global"]
        self._handles = [
            _module.register_module_forward_pre_hook(self._enter_module),
            _module.register_module_forward_hook(self._exit_module, always_call=True),
        ]
        return super().__enter__()

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles = []
        out = super().__exit__(*exc)
        if self.display:
            print(self.get_table(self.depth))
        return out

    def _enter_module(self, module, args) -> None:
        name = self._names.get(id(module)) or type(module).__name__
        for child_name, child in module.named_children():
            self._names.setdefault(id(child), f"{name}.{child_name}")
        self._parents.append(name)

    def _exit_module(self, module, args, output) -> None:
        if len(self._parents) > 1:
            self._parents.pop()

    def _charge(self, parents, op: str, flops: int) -> None:
        key = _op(op)
        for p in dict.fromkeys(parents):
            self.flop_counts[p][key] += flops

    def _backward_hook(self, backward: dict, parents: list):
        def on_grad(grad):
            if self._handles:  # still inside the mode
                for op, flops in backward.items():
                    self._charge(parents, op, flops)

        return on_grad

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        formula = self._custom.get(name) or _FORMULAS.get(name)
        if formula is None:
            return out
        if getattr(formula, "needs_output", False):
            charges = formula(*args, _out=out, **kwargs)
        else:
            charges = formula(*args, **kwargs)
        parents = list(self._parents)
        backward = defaultdict(int)
        for op, flops, grads in charges:
            self._charge(parents, op, flops)
            for operand, bop, bflops in grads:
                if getattr(operand, "requires_grad", False):
                    backward[bop] += bflops
        from .._tensor import Tensor

        if backward and isinstance(out, Tensor) and out.requires_grad:
            out.register_hook(self._backward_hook(dict(backward), parents))
        return out


def _human(n: int) -> str:
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.3f}{unit}"
    return str(n)
