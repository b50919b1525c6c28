"""`torch.nn.utils.prune`: mask-based pruning of module tensors.

Pruning `module.<name>` moves the parameter to `<name>_orig`, stores a 0/1 mask in the
buffer `<name>_mask`, and installs the pruning method as a forward pre-hook that sets the
plain attribute `<name> = <name>_mask * <name>_orig` before each call. Gradients therefore
reach `<name>_orig` through the unmasked entries only. Pruning the same tensor again folds
the methods into a `PruningContainer`, which prunes only what the previous mask left alive.
The state_dict layout, error types and messages match PyTorch.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import jtorch

__all__ = [
    "BasePruningMethod",
    "PruningContainer",
    "Identity",
    "RandomUnstructured",
    "L1Unstructured",
    "RandomStructured",
    "LnStructured",
    "CustomFromMask",
    "identity",
    "random_unstructured",
    "l1_unstructured",
    "random_structured",
    "ln_structured",
    "global_unstructured",
    "custom_from_mask",
    "remove",
    "is_pruned",
]


class BasePruningMethod(ABC):
    """Matches `torch.nn.utils.prune.BasePruningMethod`.

    Subclasses define `PRUNING_TYPE` ('unstructured', 'structured' or 'global') and
    `compute_mask(t, default_mask)`.
    """

    _tensor_name: str

    def __call__(self, module, inputs) -> None:
        # The forward pre-hook: recompute the pruned tensor from `_orig` and `_mask`.
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """Returns the mask for `t`, respecting the zeros of `default_mask`."""

    def apply_mask(self, module):
        """Returns `module.<name>_mask * module.<name>_orig`."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes `module.<name>` with `cls(*args, **kwargs)` and installs the hook.

        Matches `torch.nn.utils.prune.BasePruningMethod.apply`; on failure the module is
        left as it was before the call.
        """
        old_key, old_method = _find_pruning_hook(module, name)
        method = cls(*args, **kwargs)
        method._tensor_name = name
        grew_container = False
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            method, grew_container = old_method, True
        elif old_method is not None:
            container = PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container

        try:
            orig = getattr(module, name)
            if importance_scores is None:
                importance_scores = orig
            elif importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}"
                )
        except Exception:
            if grew_container:
                method._pruning_methods = method._pruning_methods[:-1]
            raise

        first_time = old_method is None
        if first_time:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = jtorch.ones_like(orig)
        else:
            default_mask = (
                getattr(module, name + "_mask")
                .detach()
                .clone(memory_format=jtorch.contiguous_format)
            )

        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
        except Exception:
            if first_time:
                # PyTorch re-registers the parameter, which moves it to the end of
                # `_parameters`; do the same so parameter order matches.
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
                module._buffers.pop(name + "_mask", None)
            elif grew_container:
                method._pruning_methods = method._pruning_methods[:-1]
            raise
        if old_key is not None:
            del module._forward_pre_hooks[old_key]
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """Returns `t` times the mask computed from `importance_scores` (default `t`)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(
                "importance_scores should have the same shape as tensor t, "
                f"got {importance_scores.shape} vs {t.shape}"
            )
        if default_mask is None:
            default_mask = jtorch.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module) -> None:
        """Makes the pruning permanent: `<name>` becomes a plain parameter again."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        pruned = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = pruned.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _find_pruning_hook(module, name):
    """Returns (hook key, method) of the pruning hook acting on `name`, or (None, None)."""
    found = [
        (k, h)
        for k, h in module._forward_pre_hooks.items()
        if isinstance(h, BasePruningMethod) and h._tensor_name == name
    ]
    if len(found) > 1:
        raise AssertionError(
            f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
            f"{module}. Use a PruningContainer."
        )
    return found[0] if found else (None, None)


class PruningContainer(BasePruningMethod):
    """Matches `torch.nn.utils.prune.PruningContainer`: the methods applied, in order."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            # Like PyTorch, only a single method names the container's tensor; built
            # from several, `_tensor_name` must be set by hand first.
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Appends `method`, which must act on the container's tensor."""
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. "
                f"Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """Applies the latest method to the part of `t` that `default_mask` left alive."""
        method = self._pruning_methods[-1]
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            alive = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    'Pruning methods of PRUNING_TYPE "structured" need to '
                    "have the attribute `dim` defined."
                )
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            # Channels that are entirely masked already take no further part.
            others = [d for d in range(ndim) if d != dim]
            alive = [slice(None)] * ndim
            alive[dim] = default_mask.sum(dim=others) != 0
            alive = tuple(alive)
        elif kind == "global":
            alive = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        # `.to` returns `default_mask` itself when the dtype matches, so (as in PyTorch)
        # the update below also lands in `default_mask`.
        new_mask = default_mask.to(dtype=t.dtype)
        partial = method.compute_mask(t[alive], default_mask=default_mask[alive])
        new_mask[alive] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Matches `torch.nn.utils.prune.Identity`: prunes nothing."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _AmountPruning(BasePruningMethod):
    """Shared `amount` handling: an int counts entries/channels, a float is a fraction."""

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def _count(self, size: int) -> int:
        n = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(n, size)
        return n


def _zero_flat(default_mask, indices):
    mask = default_mask.clone(memory_format=jtorch.contiguous_format)
    mask.view(-1)[indices] = 0
    return mask


class RandomUnstructured(_AmountPruning):
    """Matches `torch.nn.utils.prune.RandomUnstructured`: prunes random entries."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        n = self._count(t.nelement())
        if n == 0:
            return default_mask.clone(memory_format=jtorch.contiguous_format)
        score = jtorch.rand_like(t).view(-1)
        return _zero_flat(default_mask, jtorch.topk(score, k=n).indices)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_AmountPruning):
    """Matches `torch.nn.utils.prune.L1Unstructured`: prunes the smallest |entries|."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        n = self._count(t.nelement())
        if n == 0:
            return default_mask.clone(memory_format=jtorch.contiguous_format)
        smallest = jtorch.topk(jtorch.abs(t).view(-1), k=n, largest=False).indices
        return _zero_flat(default_mask, smallest)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim: int, keep, default_mask):
    """A mask of `t`'s dtype that is 1 on the channels `keep` (a bool vector) along `dim`."""
    shape = [1] * t.dim()
    shape[dim] = t.shape[dim]
    mask = keep.to(dtype=t.dtype).reshape(shape) * jtorch.ones_like(t)
    return mask * default_mask.to(dtype=mask.dtype)


class RandomStructured(_AmountPruning):
    """Matches `torch.nn.utils.prune.RandomStructured`: prunes random channels."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1) -> None:
        super().__init__(amount)
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        n = self._count(nchannels)
        if n == 0:
            return default_mask
        # The channels with the n smallest draws go.
        prob = jtorch.rand(nchannels)
        keep = prob > jtorch.kthvalue(prob, k=n).values
        return _channel_mask(t, self.dim, keep, default_mask)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_AmountPruning):
    """Matches `torch.nn.utils.prune.LnStructured`: prunes the channels of least Ln norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1) -> None:
        super().__init__(amount)
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        n = self._count(nchannels)
        norm = _compute_norm(t, self.n, self.dim)
        if n == 0:
            return default_mask
        kept = jtorch.topk(norm, k=nchannels - n, largest=True).indices
        keep = jtorch.zeros(nchannels, dtype=jtorch.bool, device=t.device)
        keep[kept] = True
        return _channel_mask(t, self.dim, keep, default_mask)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Matches `torch.nn.utils.prune.CustomFromMask`: prunes where `mask` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match "
                f"self.mask shape {self.mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Matches `torch.nn.utils.prune.identity`."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Matches `torch.nn.utils.prune.random_unstructured`."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Matches `torch.nn.utils.prune.l1_unstructured`."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Matches `torch.nn.utils.prune.random_structured`."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Matches `torch.nn.utils.prune.ln_structured`."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    """Matches `torch.nn.utils.prune.custom_from_mask`."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Matches `torch.nn.utils.prune.global_unstructured`.

    Args:
        parameters: (module, name) pairs, pruned together as one flat vector.
        pruning_method: an 'unstructured' `BasePruningMethod` subclass, built with `kwargs`.
        importance_scores: optional dict (module, name) -> scores of the tensor's shape.
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    flatten = jtorch.nn.utils.parameters_to_vector
    scores = flatten([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    # Entries already pruned (mask 0) stay pruned and are not counted again.
    default_mask = flatten(
        [
            getattr(m, n + "_mask") if hasattr(m, n + "_mask") else jtorch.ones_like(getattr(m, n))
            for m, n in parameters
        ]
    )
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
            f"Found method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        numel = param.numel()
        custom_from_mask(module, name, mask=final_mask[start : start + numel].view_as(param))
        start += numel


def remove(module, name):
    """Matches `torch.nn.utils.prune.remove`: makes the pruning of `name` permanent."""
    key, method = _find_pruning_hook(module, name)
    if method is None:
        raise ValueError(
            f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
        )
    method.remove(module)
    del module._forward_pre_hooks[key]
    return module


def is_pruned(module) -> bool:
    """Matches `torch.nn.utils.prune.is_pruned`: whether any submodule has a pruning hook."""
    return any(
        isinstance(hook, BasePruningMethod)
        for _, sub in module.named_modules()
        for hook in sub._forward_pre_hooks.values()
    )


def _validate_pruning_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if isinstance(amount, numbers.Integral):
        bad = amount < 0
    else:
        bad = not 0.0 <= float(amount) <= 1.0
    if bad:
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a "
            "non-negative integer"
        )


def _validate_pruning_amount(amount, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def _validate_structured_pruning(t) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. "
            f"Found tensor of shape {shape} with {len(shape)} dims"
        )


def _compute_nparams_toprune(amount, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim: int):
    """The `n`-norm of each slice of `t` along `dim` (over all other dims)."""
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return jtorch.norm(t, p=n, dim=dims)
