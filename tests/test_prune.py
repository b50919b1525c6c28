"""Unit tests for `jtorch.nn.utils.prune` (expected masks worked out by hand)."""

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.utils.prune as prune
from tests.helpers import close, same

_W = [[1.0, -5.0, 3.0], [-2.0, 6.0, 0.5]]
_B = [0.25, -7.0]


def _linear():
    m = torch.nn.Linear(3, 2)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(_W))
        m.bias.copy_(torch.tensor(_B))
    return m


def _names(m):
    return (
        [n for n, _ in m.named_parameters()],
        [n for n, _ in m.named_buffers()],
        list(m.state_dict()),
    )


@pytest.mark.parametrize("amount", [2, 0.25])  # round(0.25 * 6) = round(1.5) = 2
def test_l1_unstructured_reparametrizes(amount):
    m = _linear()
    orig = m.weight
    assert prune.l1_unstructured(m, "weight", amount=amount) is m
    mask = [[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]]  # |1| and |0.5| are the smallest
    same(m.weight_mask, mask, dtype=torch.float32)
    assert m.weight_orig is orig
    same(m.weight_orig.detach(), _W)
    same(m.weight.detach(), np.multiply(_W, mask))
    assert not isinstance(m.weight, torch.nn.Parameter)
    assert _names(m) == (
        ["bias", "weight_orig"],
        ["weight_mask"],
        ["bias", "weight_orig", "weight_mask"],
    )
    assert prune.is_pruned(m) and prune.is_pruned(torch.nn.Sequential(m))
    assert not prune.is_pruned(_linear())


def test_forward_hook_and_gradient_through_mask():
    m = prune.l1_unstructured(_linear(), "weight", amount=2)
    mask = np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    x = np.array([[1.0, 2.0, 3.0]])
    y = m(torch.tensor(x, dtype=torch.float32))
    close(y.detach(), x @ (np.multiply(_W, mask)).T + _B)
    y.sum().backward()
    same(m.weight_orig.grad, mask * x)  # masked entries get no gradient
    same(m.bias.grad, [1.0, 1.0])
    with torch.no_grad():
        m.weight_orig.mul_(2)
    close(m(torch.tensor(x, dtype=torch.float32)).detach(), x @ (2 * np.multiply(_W, mask)).T + _B)


def test_iterative_pruning_composes_in_one_container():
    m = _linear()
    prune.l1_unstructured(m, "weight", amount=2)
    prune.l1_unstructured(m, "weight", amount=1)  # next smallest alive: |-2|
    same(m.weight_mask, [[0.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
    # row L1 norms of the pruned weight: 8 and 6, so row 1 goes
    prune.ln_structured(m, "weight", amount=1, n=1, dim=0)
    same(m.weight_mask, [[0.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert [type(h) for h in hooks[0]] == [
        prune.L1Unstructured,
        prune.L1Unstructured,
        prune.LnStructured,
    ]
    assert len(hooks[0]) == 3 and hooks[0][-1].dim == 0 and hooks[0]._tensor_name == "weight"


def test_remove_makes_pruning_permanent():
    m = prune.l1_unstructured(_linear(), "weight", amount=2)
    assert prune.remove(m, "weight") is m
    assert isinstance(m.weight, torch.nn.Parameter) and m.weight.requires_grad
    same(m.weight.detach(), [[0.0, -5.0, 3.0], [-2.0, 6.0, 0.0]])
    assert _names(m) == (["bias", "weight"], [], ["bias", "weight"])
    assert not m._forward_pre_hooks and not prune.is_pruned(m)
    with pytest.raises(
        ValueError,
        match="Parameter 'weight' of module Linear.*has to be pruned before pruning can be removed",
    ):
        prune.remove(m, "weight")


def test_structured_custom_identity():
    m = _linear()
    scores = torch.tensor([[9.0, 1.0, -4.0], [0.0, -2.0, 3.0]])
    # column inf-norms of the scores: 9, 2, 4, so column 1 goes
    prune.ln_structured(m, "weight", amount=1, n=float("inf"), dim=-1, importance_scores=scores)
    same(m.weight_mask, [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]])
    prune.custom_from_mask(m, "bias", mask=torch.tensor([1, 0]))
    same(m.bias_mask, [1.0, 0.0], dtype=torch.float32)
    same(m.bias.detach(), [0.25, -0.0])
    prune.identity(m, "weight")
    same(m.weight_mask, [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]])


def test_global_unstructured_pools_all_entries():
    a, b = _linear(), torch.nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        b.weight.copy_(torch.tensor([[0.1, 4.0], [-0.2, 7.0]]))
    prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=3)
    same(a.weight_mask, [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])  # 0.1, -0.2, 0.5 are smallest
    same(b.weight_mask, [[0.0, 1.0], [0.0, 1.0]])
    # already-pruned entries are not counted again; scores override magnitudes
    prune.global_unstructured(
        [(a, "weight"), (b, "weight")],
        prune.L1Unstructured,
        importance_scores={(b, "weight"): torch.zeros(2, 2)},
        amount=1,
    )
    same(b.weight_mask, [[0.0, 0.0], [0.0, 1.0]])
    assert isinstance(list(b._forward_pre_hooks.values())[0], prune.PruningContainer)


def test_random_methods_prune_counts():
    torch.manual_seed(0)
    m = prune.random_unstructured(_linear(), "weight", amount=3)
    assert int((m.weight_mask == 0).sum()) == 3
    s = prune.random_structured(_linear(), "weight", amount=1, dim=1)
    cols = s.weight_mask.numpy().all(axis=0)
    assert cols.sum() == 2 and not s.weight_mask.numpy()[:, ~cols].any()


def test_method_prune_and_container_checks():
    t = torch.tensor(_W)
    same(prune.L1Unstructured(amount=1).prune(t), [[1.0, -5.0, 3.0], [-2.0, 6.0, 0.0]])
    same(
        prune.CustomFromMask(torch.tensor([[1, 0, 1], [0, 1, 1]])).prune(t),
        [[1.0, -0.0, 3.0], [-0.0, 6.0, 0.5]],
    )
    c = prune.PruningContainer()
    c._tensor_name = "weight"
    with pytest.raises(TypeError, match="<class 'int'> is not a BasePruningMethod subclass"):
        c.add_pruning_method(3)
    other = prune.Identity()
    other._tensor_name = "bias"
    with pytest.raises(ValueError, match="acting on the parameter named 'weight'.*Found 'bias'"):
        c.add_pruning_method(other)
    with pytest.raises(TypeError, match="Can't instantiate abstract class"):
        prune.BasePruningMethod()


@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (
            lambda m: prune.l1_unstructured(m, "weight", amount=-1),
            ValueError,
            r"amount=-1 should either be a float in the range \[0, 1\] or a non-negative integer",
        ),
        (
            lambda m: prune.l1_unstructured(m, "weight", amount=1.5),
            ValueError,
            r"amount=1.5 should",
        ),
        (
            lambda m: prune.l1_unstructured(m, "weight", amount="x"),
            TypeError,
            "Invalid type for amount: x. Must be int or float.",
        ),
        (
            lambda m: prune.l1_unstructured(m, "weight", amount=7),
            ValueError,
            "amount=7 should be smaller than the number of parameters to prune=6",
        ),
        (
            lambda m: prune.ln_structured(m, "bias", amount=1, n=2, dim=0),
            ValueError,
            r"multidimensional tensors. Found tensor of shape torch.Size\(\[2\]\) with 1 dims",
        ),
        (
            lambda m: prune.random_structured(m, "weight", amount=1, dim=2),
            IndexError,
            r"Invalid index 2 for tensor of size torch.Size\(\[2, 3\]\)",
        ),
        (
            lambda m: prune.l1_unstructured(m, "weight", 1, importance_scores=torch.ones(3)),
            AssertionError,
            "importance_scores should have the same shape as parameter weight",
        ),
        (
            lambda m: prune.global_unstructured([(m, "weight")], prune.RandomStructured, amount=1),
            TypeError,
            'Only "unstructured" PRUNING_TYPE supported',
        ),
        (
            lambda m: prune.global_unstructured(3, prune.L1Unstructured, amount=1),
            TypeError,
            "parameters is not an Iterable",
        ),
    ],
)
def test_bad_input_raises_and_leaves_module_unchanged(call, exc, msg):
    m = _linear()
    with pytest.raises(exc, match=msg):
        call(m)
    assert not m._forward_pre_hooks and not m._buffers
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]
    same(m.weight.detach(), _W)


def test_failed_second_pruning_keeps_the_first():
    m = prune.l1_unstructured(_linear(), "weight", amount=2)
    with pytest.raises(ValueError, match="amount=5 should be smaller"):
        prune.l1_unstructured(m, "weight", amount=5)  # only 4 entries left
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.L1Unstructured)
    same(m.weight_mask, [[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    with torch.no_grad():
        m.weight_orig.fill_(1.0)
    m(torch.ones(1, 3))
    same(m.weight.detach(), [[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
