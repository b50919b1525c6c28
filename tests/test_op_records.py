"""One record per op: the autograd facts on each declaration (`_ops/_opdef.OpDef`).

A node name, a naming rule, `saves_result`, the post-call checks and the backward checks
are stated where the op is declared; what is still kept by name elsewhere (the node-keyed
create_graph tables of `autograd/_names.py`, `GRAD_NAMES_BY_OP`) must refer to ops and
nodes that exist, so that a typo fails here rather than silently.
"""

import gc
import re
import types

import pytest

import jtorch as torch
from jtorch._ops import _registry
from jtorch._ops._opdef import OPS, OpDef
from jtorch.autograd import _names

# PyTorch's node names: `<Op>Backward<n>`, and the few C++ nodes with other names.
_NODE = re.compile(r"^[A-Z][A-Za-z0-9]*Backward[0-9]+(_copy)?$")
_OTHER_NODES = {"CopyBackwards", "torch::autograd::CopySlices"}


def _all_defs() -> list:
    """Every declared op and kernel (kernels are not in `OPS`). An `import jtorch` that
    starts jax freezes what it made (`gc.freeze`), and `gc.get_objects` lists only the
    collector's generations: frozen objects are moved back into them while the list is
    made."""
    frozen = gc.get_freeze_count()
    if frozen:
        gc.unfreeze()
    try:
        return [d for d in gc.get_objects() if isinstance(d, OpDef)]
    finally:
        if frozen:
            gc.freeze()


def _strings(fn, out: set, seen: set) -> None:
    """The string constants a rule can return: its code's, its closure's and those of the
    module functions it calls."""
    if id(fn) in seen or not hasattr(fn, "__code__"):
        return
    seen.add(id(fn))
    codes = [fn.__code__]
    while codes:
        code = codes.pop()
        for c in code.co_consts:
            if isinstance(c, str):
                out.add(c)
            elif isinstance(c, types.CodeType):
                codes.append(c)
    for cell in fn.__closure__ or ():
        v = cell.cell_contents
        if isinstance(v, str):
            out.add(v)
        elif callable(v):
            _strings(v, out, seen)
    for name in fn.__code__.co_names:
        g = fn.__globals__.get(name)
        if isinstance(g, types.FunctionType) and g.__module__.startswith("jtorch."):
            _strings(g, out, seen)


def test_every_fixed_node_name_is_a_pytorch_name():
    bad = [
        (d.name, d.autograd_name)
        for d in _all_defs()
        if not (_NODE.match(d.autograd_name) or d.autograd_name in _OTHER_NODES)
    ]
    assert bad == []


def test_a_rule_reading_no_parameter_of_the_op_fails_at_declaration():
    def impl(input: _registry.T, dim=None):
        return input

    with pytest.raises(TypeError, match="'dims', which is not one of the op's parameters"):
        _registry.kernel(impl, node=lambda dims: "SumBackward1")


def test_a_rule_is_called_with_the_named_slots_and_statics():
    def impl(input: _registry.T, other: _registry.T, *, mode=None):
        return input

    run = _registry.kernel(impl, node=lambda other, mode: f"{type(other).__name__}-{mode}")
    rule = run._op.node_rule
    assert rule.reads_statics
    assert rule((torch.ones(1), 2.0), ("floor",)) == "float-floor"
    # a rule reading only tensor slots needs no statics (forward-mode AD has none)
    slots_only = _registry.kernel(impl, node=lambda other: "X")._op.node_rule
    assert not slots_only.reads_statics


def test_names_follow_the_declared_rules():
    """A few rules end to end (PyTorch's names, from its derivatives.yaml overloads)."""
    x = torch.ones(2, 3, requires_grad=True)
    assert x.sum().grad_fn.name() == "SumBackward0"
    assert x.sum(1).grad_fn.name() == "SumBackward1"
    assert (x**2).grad_fn.name() == "PowBackward0"
    assert (2**x).grad_fn.name() == "PowBackward2"
    assert x.clamp(min=0).grad_fn.name() == "ClampBackward1"
    assert x.clamp(min=torch.zeros(3)).grad_fn.name() == "ClampBackward0"
    assert torch.hstack([x, x]).grad_fn.name() == "CatBackward0"
    assert torch.linalg.det(x[:, :2]).grad_fn.name() == "LinalgDetBackward0"


def test_saves_result_ops_reject_an_in_place_change_of_the_result():
    x = torch.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    z = x.sin()  # saves its input, not its result
    z.add_(1)
    z.sum().backward()


def test_post_call_checks_are_on_the_published_function_and_method():
    singular = torch.zeros(2, 2)
    with pytest.raises(torch.linalg.LinAlgError, match="linalg.inv: The diagonal element 1"):
        torch.linalg.inv(singular)
    with pytest.raises(torch.linalg.LinAlgError, match="linalg.inv: The diagonal element 1"):
        singular.inverse()
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        torch.linalg.lu_factor(singular)
    info = torch.linalg.inv_ex(singular).info
    assert int(info) == 1  # `_ex` without check_errors reports, does not raise


def test_name_keyed_tables_refer_to_real_ops():
    short = {d.name for d in _all_defs()}
    assert set(_names.GRAD_NAMES_BY_OP) <= short
    # the backward checks are declared too: on the SVDs and eigendecompositions
    checked = {full for full, d in OPS.items() if getattr(d, "grad_check", None) is not None}
    assert checked == {"svd", "linalg.svd", "linalg.eig", "linalg.eigh"}


def test_node_keyed_tables_are_reachable():
    """Every node name the create_graph tables know is one some op records: a declared name,
    a string a naming rule returns, or the name of a gradient's node."""
    defs = _all_defs()
    reachable = {d.autograd_name for d in defs}
    seen: set = set()
    for d in defs:
        if d.node_rule is not None:
            _strings(d.node_rule.rule, reachable, seen)
    for v in _names._GRAD_NAMES.values():
        reachable.update(n for n in (v if isinstance(v, tuple) else (v,)) if n)
    # Names built by a rule from an argument, not spelled out in it.
    reachable.update({"MedianBackward1", "ProdBackward1"})  # by_dim("Median"), by_dim("Prod")
    reachable.update(  # _var_std: camel(kind) + "Backward0"
        {"VarBackward0", "StdBackward0", "VarMeanBackward0", "StdMeanBackward0"}
    )
    reachable.add("NativeBatchNormBackward0")  # batch_norm's kernel: named by its caller
    keys = (
        set(_names._GRAD_NAMES)
        | set(_names._GRAD_GRAD_NAMES)
        | set(_names.MASKS_ONLY)
        | set(_names.FORMULA_READS_INPUTS)
    )
    assert sorted(keys - reachable) == []
