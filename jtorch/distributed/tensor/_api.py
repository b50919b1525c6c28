"""`DTensor`, `distribute_tensor`, `distribute_module` and the DTensor factories.

A `DTensor` is a tensor together with a `DTensorSpec`: the `DeviceMesh` it lives on and one
placement per mesh dimension (`_dtensor_spec.named_sharding` says that as a
`jax.sharding.NamedSharding`). A DTensor's storage is its rank's local piece; `shape`,
`size()` and `numel()` are the global tensor's, as in PyTorch.

On a mesh of one rank the local piece is the whole tensor whatever the placements:
`to_local()`/`full_tensor()` are differentiable aliases of it, and redistributing changes
only the placements, as PyTorch's collectives over one rank do.

On a mesh of one process's local devices (`_local_devices`) the DTensor holds the whole
tensor too, as a jax array laid out over the devices by its placements.

On a mesh of several ranks (processes), `redistribute` and `full_tensor` run collectives over
the mesh's groups (`_redistribute`), differentiably. An op on DTensors computes on local
pieces where that is exact: when every argument is replicated, for an elementwise op on
DTensors of one shape and one sharding (the result keeps it), and for `F.linear` and
`F.embedding` with tensor parallelism's layouts (`_LOCAL_RULES`). Any other op works on the
replicated whole tensors (gathered first) and returns a replicated result: the values are
PyTorch's, the placements may be more replicated than PyTorch's propagation would make them.

An op on DTensors (`__torch_function__`) computes on their values and returns DTensors on the
same mesh; like PyTorch it refuses to mix a DTensor with a plain tensor of more than one
element, and DTensors of different meshes. The placements of a result are the first DTensor
argument's when the result has its shape, else `Replicate()`: PyTorch propagates placements
op by op (a sum of a `Shard(0)` tensor is `Partial`), which over one rank changes no value but
may print other placements. A DTensor's `.grad` is a DTensor view of the accumulated gradient
with the DTensor's placements.
"""

from __future__ import annotations

import jtorch

from ... import _tensor
from ..._tensor import Tensor
from ..._torch_function import DisableTorchFunctionSubclass
from ...autograd import Function
from ..device_mesh import DeviceMesh, _current_mesh
from ._dtensor_spec import DTensorSpec, TensorMeta
from ._local_devices import Relayout, laid_out
from ._redistribute import Redistribute, global_shape, is_pointwise, local_chunk, redistribute_array
from .placement_types import Partial, Placement, Replicate, Shard, _StridedShard

__all__ = [
    "DTensor",
    "distribute_module",
    "distribute_tensor",
    "empty",
    "full",
    "ones",
    "rand",
    "randn",
    "zeros",
]


def _spec_for(t: Tensor, mesh: DeviceMesh, placements, shape=None) -> DTensorSpec:
    """The spec of a DTensor whose local piece is `t` (global `shape`: t's by default)."""
    shape = tuple(t.shape) if shape is None else tuple(shape)
    return DTensorSpec(mesh, tuple(placements), TensorMeta(shape, _contiguous(shape), t.dtype))


def _contiguous(shape: tuple) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _multi(mesh: DeviceMesh) -> bool:
    """Whether `mesh` spans several processes (a DTensor then holds its rank's piece)."""
    return mesh.size() > 1 and not _on_local_devices(mesh)


def _on_local_devices(mesh: DeviceMesh) -> bool:
    """Whether `mesh`'s ranks are this process's devices (`_local_devices`)."""
    return getattr(mesh, "_local", False)


def _normalize(placements, mesh: DeviceMesh, ndim: int, check_length: bool = True) -> tuple:
    """Checks placements against the mesh and tensor; `Shard(-1)` becomes `Shard(ndim - 1)`."""
    placements = tuple(placements)
    if check_length and len(placements) != mesh.ndim:
        raise ValueError(
            f"`placements` must have the same length as `device_mesh.ndim`! Found "
            f"placements length: {len(placements)}, and device_mesh.ndim: "
            f"{mesh.ndim}."
        )
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be a sequence of Placement, got {p!r}")
        if isinstance(p, (Shard, _StridedShard)):
            lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
            if not lo <= p.dim <= hi:
                raise IndexError(
                    f"Dimension out of range (expected to be in range of "
                    f"[{lo}, {hi}], but got {p.dim})"
                )
            if p.dim < 0:
                p = (
                    _StridedShard(p.dim + ndim, split_factor=p.split_factor)
                    if isinstance(p, _StridedShard)
                    else Shard(p.dim + ndim)
                )
        out.append(p)
    return tuple(out)


# Set by `experimental.implicit_replication()`: plain tensors then count as replicated.
_IMPLICIT_REPLICATION = [False]


def _retag(t: Tensor, spec: DTensorSpec) -> DTensor:
    """Makes the plain tensor `t` (a fresh result no one else holds) the DTensor of `spec`."""
    if _tensor.subclass_hook is not None:
        _tensor.subclass_hook(DTensor)  # the first DTensor turns torch-function checks on
    t.__class__ = DTensor
    t._spec = spec
    return t


def _alias(t: Tensor) -> Tensor:
    """A differentiable alias of `t` as a plain tensor (no DTensor dispatch)."""
    with DisableTorchFunctionSubclass():
        return jtorch.alias(t)


def _tensors(obj, out: list) -> list:
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors(o, out)
    return out


def _op_name(func) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))


def _wrap_results(ret, first: DTensor):
    """Plain tensor results become DTensors on `first`'s mesh (see the module doc)."""
    if isinstance(ret, DTensor):
        return ret
    if isinstance(ret, Tensor):
        placements = (
            first.placements
            if tuple(ret.shape) == tuple(first.shape)
            else (Replicate(),) * first.device_mesh.ndim
        )
        return _retag(ret, _spec_for(ret, first.device_mesh, placements))
    if isinstance(ret, (tuple, list)):
        items = [_wrap_results(r, first) for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


class DTensor(Tensor):
    """Matches `torch.distributed.tensor.DTensor` (see the module doc)."""

    def __new__(cls, local_tensor: Tensor, spec: DTensorSpec, *, requires_grad: bool):
        t = Tensor._make_subclass(cls, local_tensor, requires_grad)
        t._spec = spec
        return t

    def __init__(self, *args, **kwargs):
        pass

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = _tensors(args, _tensors(kwargs, []))
        dtensors = [t for t in tensors if isinstance(t, DTensor)]
        if not dtensors:
            with DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        first = dtensors[0]
        for t in tensors:
            if not isinstance(t, DTensor) and t.numel() != 1 and not _IMPLICIT_REPLICATION[0]:
                raise RuntimeError(
                    f"{_op_name(func)}: got mixed torch.Tensor and DTensor, need to convert all "
                    f"torch.Tensor to DTensor before calling distributed operators!"
                )
            if isinstance(t, DTensor) and t.device_mesh != first.device_mesh:
                raise NotImplementedError(
                    f"{_op_name(func)}: DTensor does not support cross-mesh operation on "
                    f"{first.device_mesh} and {t.device_mesh}"
                )
        if _multi(first.device_mesh):
            return _dispatch_pieces(func, args, kwargs, dtensors)
        with DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
        return _wrap_results(ret, first)

    # -- what it is: the global tensor's shape ---------------------------------

    @property
    def shape(self):
        if not _multi(self.device_mesh):
            return Tensor.shape.fget(self)
        from ..._tensor import Size

        return Size(self._spec.tensor_meta.shape)

    def size(self, dim: int | None = None):
        if not _multi(self.device_mesh):
            return Tensor.size(self, dim)
        shape = self.shape
        return shape if dim is None else shape[dim]

    def numel(self) -> int:
        import math

        return math.prod(self.shape)

    def stride(self, dim: int | None = None):
        if not _multi(self.device_mesh):
            return Tensor.stride(self, dim)
        strides = _contiguous(tuple(self.shape))
        return strides if dim is None else strides[dim]

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- placements -----------------------------------------------------------

    @property
    def device_mesh(self) -> DeviceMesh:
        return self._spec.mesh

    @property
    def placements(self) -> tuple:
        return self._spec.placements

    @property
    def _local_tensor(self) -> Tensor:
        """The rank's local tensor, outside autograd (PyTorch's private field)."""
        return Tensor._make_subclass(Tensor, self)

    def __repr__(self) -> str:
        local = Tensor._make_subclass(Tensor, self, self.requires_grad and self.is_leaf)
        return (
            f"DTensor(local_tensor={local!r}, device_mesh={self.device_mesh}, "
            f"placements={self.placements})"
        )

    # -- conversions ------------------------------------------------------------

    @staticmethod
    def from_local(
        local_tensor: Tensor,
        device_mesh: DeviceMesh | None = None,
        placements=None,
        *,
        run_check: bool = False,
        shape=None,
        stride=None,
    ) -> DTensor:
        """A DTensor whose rank-local value is `local_tensor` (differentiable, sharing it)."""
        mesh = device_mesh or _current_mesh()
        placements = [Replicate()] * mesh.ndim if placements is None else placements
        # PyTorch leaves the number of placements unchecked here.
        placements = _normalize(placements, mesh, local_tensor.dim(), check_length=False)
        if not _multi(mesh):
            if shape is not None and tuple(shape) != tuple(local_tensor.shape):
                raise ValueError(
                    f"shape {tuple(shape)} is not the global shape of a local "
                    f"tensor of shape {tuple(local_tensor.shape)} on a mesh of "
                    f"one rank"
                )
            if _on_local_devices(mesh):
                with DisableTorchFunctionSubclass():
                    local = Relayout.apply(local_tensor, mesh, placements, placements)
                return _retag(local, _spec_for(local, mesh, placements))
            return _retag(_alias(local_tensor), _spec_for(local_tensor, mesh, placements))
        shape = global_shape(local_tensor.shape, mesh, placements) if shape is None else shape
        return _retag(_alias(local_tensor), _spec_for(local_tensor, mesh, placements, shape))

    def to_local(self, *, grad_placements=None) -> Tensor:
        """This rank's local tensor (differentiable; shares this DTensor's storage)."""
        return _alias(self)

    def full_tensor(self, *, grad_placements=None) -> Tensor:
        """The whole global tensor (differentiable): over one rank, the local tensor."""
        if _on_local_devices(self.device_mesh):
            with DisableTorchFunctionSubclass():
                return Relayout.apply(self, self.device_mesh, self.placements, None)
        if not _multi(self.device_mesh):
            return _alias(self)
        replicate = (Replicate(),) * self.device_mesh.ndim
        return Redistribute.apply(
            _alias(self), self.device_mesh, self.placements, replicate, tuple(self.shape)
        )

    def redistribute(
        self,
        device_mesh: DeviceMesh | None = None,
        placements=None,
        *,
        async_op: bool = False,
        forward_dtype=None,
        backward_dtype=None,
    ) -> DTensor:
        """The same global tensor with new placements (differentiable)."""
        mesh = device_mesh or self.device_mesh
        if mesh != self.device_mesh:
            raise NotImplementedError("Cross device mesh comm not supported yet!")
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        placements = tuple(placements)
        if len(placements) != mesh.ndim:
            raise ValueError(
                f"`placements` must have the same length as `device_mesh.ndim`! "
                f"Found placements length: {len(placements)}, and "
                f"device_mesh.ndim: {mesh.ndim}."
            )
        placements = tuple(
            Shard(p.dim + self.dim()) if type(p) is Shard and p.dim < 0 else p for p in placements
        )
        for cur, new in zip(self.placements, placements):
            if isinstance(new, Partial) and cur != new:
                raise RuntimeError(
                    f"Can not redistribute from {cur} to {new}, redistributing "
                    f"to Partial is for internal use only!"
                )
        with DisableTorchFunctionSubclass():
            src = self if forward_dtype is None else self.to(forward_dtype)
            if _on_local_devices(mesh):
                return _retag(
                    Relayout.apply(src, mesh, self.placements, placements),
                    _spec_for(src, mesh, placements),
                )
            if not _multi(mesh):
                return _retag(jtorch.alias(src), _spec_for(src, mesh, placements))
            local = Redistribute.apply(
                jtorch.alias(src), mesh, self.placements, placements, tuple(self.shape)
            )
        return _retag(local, _spec_for(local, mesh, placements, self.shape))

    # -- tensor protocol where a DTensor stays a DTensor ------------------------

    def detach(self) -> DTensor:
        return _retag(Tensor._make_subclass(Tensor, self), self._spec)

    def _local_write(self, arr) -> None:
        """Rebinds this rank's piece (an in-place op computed on the whole tensor)."""
        Tensor._write(self, arr)

    @property
    def data(self) -> DTensor:
        return self.detach()

    @data.setter
    def data(self, other: Tensor) -> None:
        self._rebind(other)

    @property
    def grad(self):
        g = Tensor.grad.fget(self)
        if g is None or isinstance(g, DTensor):
            return g
        return _retag(
            Tensor._make_subclass(Tensor, g),
            _spec_for(g, self.device_mesh, self.placements, self._spec.shape),
        )

    @grad.setter
    def grad(self, value) -> None:
        Tensor.grad.fset(self, value)

    @grad.deleter
    def grad(self) -> None:
        Tensor.grad.fdel(self)

    def _new_like(self, name: str, size, rest: tuple, kwargs: dict):
        """`new_zeros`/`new_ones`/`new_empty`/`new_full` (see `_new_factory`)."""
        make = getattr(Tensor, name)
        if not _multi(self.device_mesh):
            return make(self, size, *rest, **kwargs)
        shape = tuple(size)
        plain = Tensor._make_subclass(Tensor, self)
        if shape == tuple(self.shape) and not any(p.is_partial() for p in self.placements):
            # As PyTorch's factory strategy: a tensor of this shape takes this layout.
            local = make(plain, tuple(self._shape()), *rest, **kwargs)
            return _retag(local, _spec_for(local, self.device_mesh, self.placements, self.shape))
        full = make(plain, shape, *rest, **kwargs)
        return _retag(
            full, _spec_for(full, self.device_mesh, (Replicate(),) * self.device_mesh.ndim)
        )

    def new_zeros(self, *size, **kwargs):
        return self._new_like("new_zeros", _size_arg(size, kwargs), (), kwargs)

    def new_ones(self, *size, **kwargs):
        return self._new_like("new_ones", _size_arg(size, kwargs), (), kwargs)

    def new_empty(self, *size, **kwargs):
        return self._new_like("new_empty", _size_arg(size, kwargs), (), kwargs)

    def new_full(self, size, fill_value, **kwargs):
        return self._new_like("new_full", tuple(size), (fill_value,), kwargs)

    def __reduce_ex__(self, protocol):
        return (
            _rebuild_dtensor,
            (
                self.to_local().detach(),
                self.device_mesh,
                self.placements,
                self.requires_grad,
                tuple(self.shape),
            ),
        )


def _size_arg(size: tuple, kwargs: dict) -> tuple:
    if "size" in kwargs:
        return tuple(kwargs.pop("size"))
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def _rebuild_dtensor(local: Tensor, mesh: DeviceMesh, placements, requires_grad: bool, shape=None):
    return DTensor(local, _spec_for(local, mesh, placements, shape), requires_grad=requires_grad)


def _replace_dtensors(obj, convert):
    if isinstance(obj, DTensor):
        return convert(obj)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_replace_dtensors(o, convert) for o in obj)
    if isinstance(obj, dict):
        return {k: _replace_dtensors(v, convert) for k, v in obj.items()}
    return obj


def _is_inplace(func) -> bool:
    name = getattr(func, "__name__", "")
    return (
        (name.endswith("_") and not name.startswith("__"))
        or name.startswith("__i")
        or name == "__setitem__"
    )


# Ops whose result has their (first) argument's shape and layout, computed elementwise.
_ELEMENTWISE = frozenset(
    (
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "rand_like",
        "randn_like",
        "clone",
        "contiguous",
        "to",
        "type_as",
        "float",
        "double",
        "half",
        "bfloat16",
        "detach",
        "copy_",
        "fill_",
        "zero_",
        "normal_",
        "uniform_",
        "requires_grad_",
        "__deepcopy__",
    )
)


def _elementwise(func) -> bool:
    return is_pointwise(func) or getattr(func, "__name__", "") in _ELEMENTWISE


def _dispatch_pieces(func, args, kwargs, dtensors: list):
    """An op on DTensors of a mesh of several ranks (see the module doc)."""
    local_rule = _LOCAL_RULES.get(getattr(func, "__name__", ""))
    if local_rule is not None:
        out = local_rule(*args, **kwargs)
        if out is not None:
            return out
    first = dtensors[0]
    mesh, placements = first.device_mesh, first.placements
    replicated = all(p.is_replicate() for d in dtensors for p in d.placements)
    local = replicated or (
        _elementwise(func)
        and not any(p.is_partial() for p in placements)
        and all(
            d.placements == placements and tuple(d.shape) == tuple(first.shape) for d in dtensors
        )
    )
    convert = _alias if local else (lambda d: d.full_tensor())
    new_args = _replace_dtensors(args, convert)
    new_kwargs = _replace_dtensors(kwargs, convert)
    with DisableTorchFunctionSubclass():
        ret = func(*new_args, **new_kwargs)
    target = args[0] if args and isinstance(args[0], DTensor) and _is_inplace(func) else None
    if target is not None:
        if not local:
            # Computed on the whole tensor: this rank keeps its piece.
            with DisableTorchFunctionSubclass():
                target._local_write(
                    local_chunk(new_args[0]._array, mesh, target.placements, tuple(target.shape))
                )
        return target
    result_placements = placements if local else (Replicate(),) * mesh.ndim

    def wrap(r):
        if isinstance(r, DTensor) or not isinstance(r, Tensor):
            return r
        if local and tuple(r._shape()) == tuple(first._shape()):
            return _retag(r, _spec_for(r, mesh, result_placements, first.shape))
        return _retag(r, _spec_for(r, mesh, (Replicate(),) * mesh.ndim))

    if isinstance(ret, (tuple, list)):
        items = [wrap(r) for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return wrap(ret)


class _SumGradients(Function):
    """The identity whose backward sums the gradient over the ranks of a 1-d mesh: a
    replicated input to a computation split over the ranks gets a part of its gradient
    from each (Megatron's "copy to the tensor-parallel region")."""

    @staticmethod
    def forward(ctx, local: Tensor, mesh):
        ctx.mesh = mesh
        return _tensor.wrap(local._array)

    @staticmethod
    def backward(ctx, grad: Tensor):
        g = redistribute_array(
            grad._array, ctx.mesh, (Partial(),), (Replicate(),), tuple(grad.shape)
        )
        return _tensor.wrap(g), None


def _sharded_linear(input, weight, bias=None):
    """`F.linear` on the local pieces, for the two layouts tensor parallelism makes (as
    PyTorch's sharding rules for a matmul compute it); None for any other layout:
    - input replicated, weight `Shard(0)` (bias `Shard(0)` or none), as `ColwiseParallel`
      lays out a Linear: each rank computes its output features, `Shard(-1)`; in backward
      the input's gradient is the sum of the ranks' parts (one all-reduce);
    - input `Shard(-1)`, weight `Shard(1)` (bias replicated or none), as `RowwiseParallel`
      does: each rank's product is a partial sum, `Partial()`; with a bias the sum is
      all-reduced first and the bias added once, `Replicate()`.
    """
    x, w, b = input, weight, bias
    if not (
        isinstance(x, DTensor) and isinstance(w, DTensor) and (b is None or isinstance(b, DTensor))
    ):
        return None
    mesh = w.device_mesh
    if mesh.ndim != 1 or x.device_mesh != mesh or (b is not None and b.device_mesh != mesh):
        return None
    xp, wp = x.placements[0], w.placements[0]
    bp = None if b is None else b.placements[0]
    shape = tuple(x.shape[:-1]) + (w.shape[0],)
    F = jtorch.nn.functional
    if xp.is_replicate() and wp == Shard(0) and bp in (None, Shard(0)):
        with DisableTorchFunctionSubclass():
            out = F.linear(
                _SumGradients.apply(_alias(x), mesh), _alias(w), None if b is None else _alias(b)
            )
        return _retag(out, _spec_for(out, mesh, (Shard(len(shape) - 1),), shape))
    if xp == Shard(x.dim() - 1) and wp == Shard(1) and bp in (None, Replicate()):
        with DisableTorchFunctionSubclass():
            out = F.linear(_alias(x), _alias(w))
            if b is None:
                return _retag(out, _spec_for(out, mesh, (Partial(),), shape))
            out = Redistribute.apply(out, mesh, (Partial(),), (Replicate(),), shape) + _alias(b)
        return _retag(out, _spec_for(out, mesh, (Replicate(),), shape))
    return None


def _sharded_embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    """`F.embedding` on the local pieces, for the layouts tensor parallelism makes; None for
    any other (and with `max_norm`, `scale_grad_by_freq` or `sparse`):
    - indices replicated, weight `Shard(1)` (`ColwiseParallel`): each rank looks up its
      columns of the embedding, `Shard(-1)`;
    - indices replicated, weight `Shard(0)` (`RowwiseParallel`): each rank looks up the
      indices its rows hold and gives zeros for the others; their sum over the ranks is the
      lookup, `Partial()` (PyTorch's `MaskPartial`).
    """
    idx, w = input, weight
    if (
        not (isinstance(idx, DTensor) and isinstance(w, DTensor))
        or max_norm is not None
        or scale_grad_by_freq
        or sparse
    ):
        return None
    mesh = w.device_mesh
    if mesh.ndim != 1 or idx.device_mesh != mesh or not idx.placements[0].is_replicate():
        return None
    rows, dim = w.shape
    shape = tuple(idx.shape) + (dim,)
    F = jtorch.nn.functional
    if padding_idx is not None and padding_idx < 0:
        padding_idx += rows
    if w.placements[0] == Shard(1):
        with DisableTorchFunctionSubclass():
            out = F.embedding(_alias(idx), _alias(w), padding_idx)
        return _retag(out, _spec_for(out, mesh, (Shard(len(shape) - 1),), shape))
    if w.placements[0] != Shard(0):
        return None
    length, start = Shard.local_shard_size_and_offset(rows, mesh.size(0), mesh.get_coordinate()[0])
    local_pad = (
        padding_idx - start
        if padding_idx is not None and start <= padding_idx < start + length
        else None
    )
    with DisableTorchFunctionSubclass():
        i, lw = _alias(idx), _alias(w)
        outside = (i < start) | (i >= start + length)
        if length == 0:
            # No rows here: zeros, still connected to the (empty) local weight.
            out = jtorch.zeros(shape, dtype=lw.dtype) + lw.sum()
        else:
            out = F.embedding(jtorch.where(outside, 0, i - start), lw, local_pad)
            out = out.masked_fill(outside.unsqueeze(-1), 0)
    return _retag(out, _spec_for(out, mesh, (Partial(),), shape))


# Ops computed on local pieces for the layouts tensor parallelism makes.
_LOCAL_RULES = {"linear": _sharded_linear, "embedding": _sharded_embedding}


def distribute_tensor(
    tensor: Tensor,
    device_mesh: DeviceMesh | None = None,
    placements=None,
    *,
    src_data_rank: int | None = 0,
) -> DTensor:
    """Matches `torch.distributed.tensor.distribute_tensor`: a leaf DTensor of `tensor`.

    As in PyTorch, an all-`Replicate` result shares `tensor`'s storage and a sharded one is a
    copy; the result is a new leaf that requires grad when `tensor` does.
    """
    mesh = device_mesh or _current_mesh()
    placements = [Replicate()] * mesh.ndim if placements is None else list(placements)
    if isinstance(tensor, DTensor):
        if tensor.device_mesh != mesh:
            raise ValueError(
                f"Cannot distribute a DTensor with device mesh "
                f"{tensor.device_mesh} to a different device mesh {mesh}."
            )
        if tuple(tensor.placements) != tuple(placements):
            raise ValueError(
                f"Cannot distribute a DTensor with placements {tensor.placements} "
                f"to a different placements {placements}. do you want to call "
                f"`redistribute` instead?"
            )
        return tensor
    placements = _normalize(placements, mesh, tensor.dim())
    local = tensor.detach()
    if _multi(mesh):
        return _distribute_pieces(local, mesh, placements, src_data_rank, tensor.requires_grad)
    if any(p.is_shard() for p in placements):
        local = local.clone()
    if _on_local_devices(mesh):
        local = _tensor.wrap(laid_out(local._array, mesh, placements))
    return DTensor(local, _spec_for(local, mesh, placements), requires_grad=tensor.requires_grad)


def _distribute_pieces(
    full: Tensor, mesh: DeviceMesh, placements, src_data_rank, requires_grad: bool
) -> DTensor:
    """This rank's piece of `full`, taken from the mesh rank `src_data_rank`'s values
    (broadcast over the mesh first), or from this rank's own with `src_data_rank=None`."""
    from ..._tensor import wrap
    from .. import distributed_c10d as c10d

    for p in placements:
        if isinstance(p, Partial):
            raise RuntimeError("distribute_tensor does not support Partial placements")
    arr = full._array
    if src_data_rank is not None:
        ranks = sorted(int(r) for r in mesh._ranks.ravel())
        root = int(mesh._ranks.ravel()[src_data_rank])
        pg = (
            c10d._World.WORLD
            if ranks == list(range(c10d.get_world_size()))
            else mesh.__dict__.setdefault("_all_group", c10d.new_group(ranks))
        )
        arr = c10d._run("broadcast", pg, arr, pg.ranks.index(root))
    local = wrap(local_chunk(arr, mesh, placements, tuple(full.shape)))
    return DTensor(
        local, _spec_for(local, mesh, placements, full.shape), requires_grad=requires_grad
    )


def distribute_module(
    module, device_mesh: DeviceMesh | None = None, partition_fn=None, input_fn=None, output_fn=None
):
    """Matches `torch.distributed.tensor.distribute_module`: parameters and buffers become
    DTensors (replicated unless `partition_fn` places them); `input_fn`/`output_fn` become a
    forward pre-hook and a forward hook."""
    from ...nn import Parameter

    if getattr(module, "_distribute_module_applied", False):
        raise RuntimeError(
            "distribute_module should only be called once on a module, but it "
            "has already been called on this module!"
        )
    mesh = device_mesh or _current_mesh()
    replicate = [Replicate()] * mesh.ndim

    def replicate_rest(mod) -> None:
        for name, p in list(mod._parameters.items()):
            if p is not None and not isinstance(p, DTensor):
                mod.register_parameter(
                    name, Parameter(distribute_tensor(p.data, mesh, replicate), p.requires_grad)
                )
        for name, b in list(mod._buffers.items()):
            if b is not None and not isinstance(b, DTensor):
                mod._buffers[name] = distribute_tensor(b, mesh, replicate)

    for name, submod in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, submod, mesh)
        replicate_rest(submod)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda mod, inputs: input_fn(mod, inputs, mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda mod, inputs, outputs: output_fn(mod, outputs, mesh))
    module._distribute_module_applied = True
    return module


def _factory(make, size, requires_grad: bool, device_mesh, placements, dtype) -> DTensor:
    mesh = device_mesh or _current_mesh()
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    full = make(tuple(size), mesh.device_type, dtype)
    placements = [Replicate()] * mesh.ndim if placements is None else placements
    placements = _normalize(placements, mesh, full.dim())
    if _multi(mesh):
        return _distribute_pieces(full, mesh, placements, None, requires_grad)
    if _on_local_devices(mesh):
        full = _tensor.wrap(laid_out(full._array, mesh, placements))
    return DTensor(full, _spec_for(full, mesh, placements), requires_grad=requires_grad)


def ones(
    *size, requires_grad: bool = False, dtype=None, layout=None, device_mesh=None, placements=None
) -> DTensor:
    """Matches `torch.distributed.tensor.ones`."""
    return _factory(
        lambda s, d, t: jtorch.ones(s, device=d, dtype=t),
        size,
        requires_grad,
        device_mesh,
        placements,
        dtype,
    )


def zeros(
    *size, requires_grad: bool = False, dtype=None, layout=None, device_mesh=None, placements=None
) -> DTensor:
    """Matches `torch.distributed.tensor.zeros`."""
    return _factory(
        lambda s, d, t: jtorch.zeros(s, device=d, dtype=t),
        size,
        requires_grad,
        device_mesh,
        placements,
        dtype,
    )


def empty(
    *size, requires_grad: bool = False, dtype=None, layout=None, device_mesh=None, placements=None
) -> DTensor:
    """Matches `torch.distributed.tensor.empty`."""
    return _factory(
        lambda s, d, t: jtorch.empty(s, device=d, dtype=t),
        size,
        requires_grad,
        device_mesh,
        placements,
        dtype,
    )


def full(
    size,
    fill_value,
    *,
    requires_grad: bool = False,
    dtype=None,
    layout=None,
    device_mesh=None,
    placements=None,
) -> DTensor:
    """Matches `torch.distributed.tensor.full`."""
    return _factory(
        lambda s, d, t: jtorch.full(s, fill_value, device=d, dtype=t),
        (size,),
        requires_grad,
        device_mesh,
        placements,
        dtype,
    )


def rand(
    *size, requires_grad: bool = False, dtype=None, layout=None, device_mesh=None, placements=None
) -> DTensor:
    """Matches `torch.distributed.tensor.rand` (jtorch's random stream)."""
    return _factory(
        lambda s, d, t: jtorch.rand(s, device=d, dtype=t),
        size,
        requires_grad,
        device_mesh,
        placements,
        dtype,
    )


def randn(
    *size, requires_grad: bool = False, dtype=None, layout=None, device_mesh=None, placements=None
) -> DTensor:
    """Matches `torch.distributed.tensor.randn` (jtorch's random stream)."""
    return _factory(
        lambda s, d, t: jtorch.randn(s, device=d, dtype=t),
        size,
        requires_grad,
        device_mesh,
        placements,
        dtype,
    )
