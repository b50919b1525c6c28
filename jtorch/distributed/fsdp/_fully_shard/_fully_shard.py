"""FSDP2: `fully_shard`, `FSDPModule`, `register_fsdp_forward_method`, `share_comm_ctx`.

`fully_shard(module)` shards the parameters the module manages (its own and those of its
submodules not managed by an inner `fully_shard`) over a mesh: each becomes an
`nn.Parameter` holding a DTensor, `Shard(0)` on a 1-d mesh (HSDP: `(Replicate(), Shard(0))` on a
2-d one). The module's class becomes `FSDP<Class>`, a subclass of `FSDPModule` and of its class.

As PyTorch, before forward each managed parameter's module gets the unsharded parameter
(registered in its parameter table for the forward, cast to `param_dtype` under a
`MixedPrecisionPolicy`), and after forward the sharded DTensor goes back; gradients flow
through the unsharded tensor into the DTensors' `.grad`. Over several ranks the unsharded
parameter is all-gathered and its gradient reduce-scattered (`_unshard`); as in PyTorch,
each rank's shard is its `torch.chunk` of its own initial parameter (ranks start alike). Over
one process's local devices the parameter is one array sharded over them, laid out whole for
the forward (`tensor._local_devices`). Over one rank the unsharded parameter is a plain,
differentiable alias of its DTensor, so the module computes what it computed before. The
policy's other parts apply as in PyTorch: floating inputs cast to `param_dtype`, outputs to
`output_dtype`, gradients reduced in `reduce_dtype`.
"""

from __future__ import annotations

from ... import distributed_c10d as c10d
from ...device_mesh import DeviceMesh, init_device_mesh
from ...tensor import DTensor, Replicate, Shard, distribute_tensor
from ...tensor._api import _multi, _on_local_devices
from ._fsdp_api import MixedPrecisionPolicy, OffloadPolicy
from ._unshard import ParamRef, Unshard

__all__ = [
    "FSDPModule",
    "UnshardHandle",
    "fully_shard",
    "register_fsdp_forward_method",
    "share_comm_ctx",
]


class _FSDPState:
    """What `fully_shard` keeps per module: its mesh, managed parameters and settings."""

    def __init__(
        self, mesh: DeviceMesh, params: list, mp_policy: MixedPrecisionPolicy, reshard_after_forward
    ):
        self.mesh = mesh
        self.params = params  # [(owner module, name)]
        self.mp_policy = mp_policy
        self.reshard_after_forward = reshard_after_forward
        self.requires_gradient_sync = True
        self.is_last_backward = True
        self.reshard_after_backward = True
        self.settings: dict = {}  # communication knobs (no effect over one rank)
        self.swapped: list = []
        self.unsharded_grads: dict = {}  # accumulated without gradient sync


class UnshardHandle:
    """Matches `torch.distributed.fsdp.UnshardHandle`: the all-gather of `unshard(async_op)`."""

    def wait(self) -> None:
        return None


class FSDPModule:
    """Matches `torch.distributed.fsdp.FSDPModule`: the methods `fully_shard` adds."""

    def __deepcopy__(self, memo):
        raise AssertionError(
            "FSDP does not support deepcopy. Please use state dict for serialization."
        )

    def reshard(self) -> None:
        """Frees the unsharded parameters: over one rank they are the sharded ones."""

    def unshard(self, async_op: bool = False):
        """All-gathers the parameters (over one rank, nothing to gather)."""
        return UnshardHandle() if async_op else None

    def _state(self) -> _FSDPState:
        return self.__dict__["_fsdp_state"]

    def set_is_last_backward(self, is_last_backward: bool) -> None:
        self._state().is_last_backward = is_last_backward

    def set_requires_gradient_sync(
        self, requires_gradient_sync: bool, *, recurse: bool = True
    ) -> None:
        for m in self.modules() if recurse else [self]:
            if isinstance(m, FSDPModule):
                m._state().requires_gradient_sync = requires_gradient_sync

    def set_requires_all_reduce(self, requires_all_reduce: bool, *, recurse: bool = True):
        for m in self.modules() if recurse else [self]:
            if isinstance(m, FSDPModule):
                m._state().settings["requires_all_reduce"] = requires_all_reduce

    def set_reshard_after_forward(self, reshard_after_forward: bool, recurse: bool = True):
        if not isinstance(reshard_after_forward, bool):
            raise ValueError(
                f"reshard_after_forward should be a bool, got {type(reshard_after_forward)}"
            )
        for m in self.modules() if recurse else [self]:
            if isinstance(m, FSDPModule):
                m._state().reshard_after_forward = reshard_after_forward

    def set_reshard_after_backward(
        self, reshard_after_backward: bool, *, recurse: bool = True
    ) -> None:
        for m in self.modules() if recurse else [self]:
            if isinstance(m, FSDPModule):
                m._state().reshard_after_backward = reshard_after_backward

    def set_modules_to_forward_prefetch(self, modules: list) -> None:
        _check_fsdp_modules(modules)
        self._state().settings["forward_prefetch"] = list(modules)

    def set_modules_to_backward_prefetch(self, modules: list) -> None:
        _check_fsdp_modules(modules)
        self._state().settings["backward_prefetch"] = list(modules)

    def _set(self, name: str, value) -> None:
        self._state().settings[name] = value

    def set_custom_all_gather(self, comm) -> None:
        self._set("all_gather", comm)

    def set_custom_reduce_scatter(self, comm) -> None:
        self._set("reduce_scatter", comm)

    def set_all_reduce_hook(self, hook, *, stream=None) -> None:
        self._set("all_reduce_hook", hook)

    def set_post_optim_event(self, event) -> None:
        self._set("post_optim_event", event)

    def set_reduce_scatter_divide_factor(self, factor: float) -> None:
        self._set("gradient_divide_factor", factor)

    def set_gradient_divide_factor(self, factor: float) -> None:
        self._set("gradient_divide_factor", factor)

    def set_force_sum_reduction_for_comms(self, enable: bool) -> None:
        self._set("force_sum_reduction_for_comms", enable)

    def set_unshard_in_backward(self, unshard_in_backward: bool) -> None:
        self._set("unshard_in_backward", unshard_in_backward)

    def set_reduce_scatter_unused_params(self, enable: bool) -> None:
        self._set("reduce_scatter_unused_params", enable)

    def set_allocate_memory_from_process_group_for_comm(self, enable: bool) -> None:
        self._set("allocate_memory_from_process_group", enable)

    def reset_iter_state(self) -> None:
        """Resets per-iteration bookkeeping (nothing is carried over one rank)."""


def _check_fsdp_modules(modules) -> None:
    for m in modules:
        if not isinstance(m, FSDPModule):
            raise ValueError(f"Expects FSDPModule but got {type(m)}: {m}")


_FSDP_CLASSES: dict = {}


def _fsdp_class(cls: type) -> type:
    """`FSDP<cls>`: FSDPModule leftmost, so its methods win, as in PyTorch."""
    if cls not in _FSDP_CLASSES:
        _FSDP_CLASSES[cls] = type(
            f"FSDP{cls.__name__}", (FSDPModule, cls), {"__module__": cls.__module__}
        )
    return _FSDP_CLASSES[cls]


def _default_mesh() -> DeviceMesh:
    from .... import accelerator

    if not c10d.is_initialized():
        c10d.init_process_group()
    acc = accelerator.current_accelerator()
    return init_device_mesh(
        acc.type if acc is not None else "cpu", (c10d._get_default_group().size(),)
    )


def _managed(modules: list, ignored_params: set) -> list:
    """The (owner, name) of each parameter these modules manage, shared ones once."""
    out, seen = [], set()

    def visit(mod, is_root: bool) -> None:
        if not is_root and "_fsdp_state" in mod.__dict__:
            return  # an inner fully_shard manages this subtree
        for name, p in mod._parameters.items():
            if p is None or id(p) in seen or any(p is q for q in ignored_params):
                continue
            seen.add(id(p))
            out.append((mod, name))
        for child in mod._modules.values():
            if child is not None:
                visit(child, False)

    for m in modules:
        visit(m, True)
    return out


def _placements(mesh: DeviceMesh, param, shard_placement_fn) -> list:
    shard = shard_placement_fn(param) if shard_placement_fn is not None else None
    shard = shard or Shard(0)
    if mesh.ndim == 1:
        return [shard]
    return [Replicate(), shard]  # HSDP: replicate over dim 0, shard over dim 1


def fully_shard(
    module,
    *,
    mesh: DeviceMesh | None = None,
    reshard_after_forward=None,
    shard_placement_fn=None,
    mp_policy: MixedPrecisionPolicy = MixedPrecisionPolicy(),
    offload_policy: OffloadPolicy = OffloadPolicy(),
    ignored_params=None,
    dp_mesh_dims=None,
):
    """Matches `torch.distributed.fsdp.fully_shard` (see the module doc)."""
    from ....nn import ModuleDict, ModuleList, Parameter
    from ....nn.modules.module import Module

    modules = list(module) if isinstance(module, (list, tuple)) else [module]
    for m in modules:
        if isinstance(m, (ModuleList, ModuleDict)) and type(m).forward is Module.forward:
            raise ValueError(
                f"fully_shard does not support containers that do not implement forward: {m}"
            )
    mesh = mesh or _default_mesh()
    if dp_mesh_dims is None and mesh.ndim not in (1, 2):
        raise ValueError(f"fully_shard expects a 1D or 2D DeviceMesh but got {mesh}")
    ignored = set(ignored_params or ())
    params = _managed(modules, ignored)
    for owner, name in params:
        p = owner._parameters[name]
        if not isinstance(p, DTensor):
            d = distribute_tensor(
                p.detach(), mesh, _placements(mesh, p, shard_placement_fn), src_data_rank=None
            )
            new = Parameter(d, requires_grad=p.requires_grad)
            for m in modules:  # a parameter shared by several owners
                for sub in m.modules():
                    for k, q in list(sub._parameters.items()):
                        if q is p:
                            sub._parameters[k] = new
    state = _FSDPState(mesh, params, mp_policy, reshard_after_forward)
    for m in modules:
        m.__dict__["_fsdp_state"] = state
        m.register_forward_pre_hook(_pre_forward, with_kwargs=True)
        m.register_forward_hook(_post_forward)
        for sub in m.modules():
            sub._is_fsdp_managed_module = True
            sub._fsdp_use_orig_params = True
        m.__class__ = _fsdp_class(type(m))
    if mp_policy.reduce_dtype is not None and not _multi(mesh):
        _round_grads(state)
    return module


def _cast(obj, dtype):
    """Casts the floating tensors in (nested) args to `dtype`."""
    from ...._tensor import Tensor

    if isinstance(obj, Tensor):
        return obj.to(dtype) if obj.dtype.is_floating_point else obj
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cast(o, dtype) for o in obj)
    if isinstance(obj, dict):
        return {k: _cast(v, dtype) for k, v in obj.items()}
    return obj


def _pre_forward(module, args, kwargs):
    state = module.__dict__["_fsdp_state"]
    dtype = state.mp_policy.param_dtype
    for owner, name in state.params:
        p = owner._parameters[name]
        if isinstance(p, DTensor):
            # The unsharded parameter (cast to the policy's dtype), set in the owner's
            # parameter table for the forward.
            if _multi(state.mesh):
                unsharded = Unshard.apply(
                    p.to_local(),
                    ParamRef(p),
                    state,
                    (id(owner), name),
                    dtype if dtype != p.dtype else None,
                )
            else:
                # Over local devices: the array laid out whole on every device (its gradient
                # laid back out as the shards, which XLA does by a reduce-scatter).
                unsharded = _laid_out_whole(p) if _on_local_devices(state.mesh) else p.to_local()
                if dtype is not None and unsharded.dtype != dtype:
                    unsharded = unsharded.to(dtype)
            state.swapped.append((owner, name, p))
            owner._parameters[name] = unsharded
    if dtype is not None and state.mp_policy.cast_forward_inputs:
        return _cast(args, dtype), _cast(kwargs, dtype)
    return None


def _laid_out_whole(p: DTensor):
    """`p` whole on every device of its local-device mesh (differentiable)."""
    from ...._torch_function import DisableTorchFunctionSubclass
    from ...tensor._local_devices import Relayout

    with DisableTorchFunctionSubclass():
        return Relayout.apply(p, p.device_mesh, p.placements, (Replicate(),) * p.device_mesh.ndim)


def _post_forward(module, args, output):
    state = module.__dict__["_fsdp_state"]
    for owner, name, p in reversed(state.swapped):
        owner._parameters[name] = p
    state.swapped.clear()
    if state.mp_policy.output_dtype is not None:
        return _cast(output, state.mp_policy.output_dtype)
    return None


def _round_grads(state: _FSDPState) -> None:
    """Gradients pass through `reduce_dtype`, as PyTorch's reduce-scatter does."""
    dtype = state.mp_policy.reduce_dtype
    for owner, name in state.params:
        p = owner._parameters[name]
        if p.requires_grad:
            p.register_hook(lambda g, dtype=dtype: g.to(dtype).to(g.dtype))


def register_fsdp_forward_method(module, method_name: str) -> None:
    """Runs `module.<method_name>` with the FSDP forward hooks, as `forward` runs."""
    if not isinstance(module, FSDPModule):
        return  # PyTorch: a no-op for a non-FSDP module
    method = getattr(module, method_name)

    def wrapped(*args, **kwargs):
        new = _pre_forward(module, args, kwargs)
        if new is not None:
            args, kwargs = new
        out = method(*args, **kwargs)
        cast = _post_forward(module, args, out)
        return out if cast is None else cast

    setattr(module, method_name, wrapped)


def share_comm_ctx(modules: list) -> None:
    """Lets FSDP modules share communication streams (one rank: nothing to share)."""
    _check_fsdp_modules(modules)
