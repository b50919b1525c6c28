"""Tensor-parallel styles: how a module's parameters, inputs and outputs are laid out.

A style shards the parameters of the module it is applied to (`ColwiseParallel`: a Linear's
output features, an Embedding's embedding dim; `RowwiseParallel`: input features, or
the vocabulary), and installs forward hooks that turn inputs into DTensors of the layouts the
module expects and outputs into the layouts asked for (plain local tensors by default).
Over a mesh of one rank the values are those of the unsharded module.
"""

from __future__ import annotations

from ...._tensor import Tensor
from ....nn import Embedding, Linear, Parameter
from .._api import DTensor, _normalize, distribute_module, distribute_tensor
from ..placement_types import Replicate, Shard

__all__ = [
    "ColwiseParallel",
    "ParallelStyle",
    "PrepareModuleInput",
    "PrepareModuleInputOutput",
    "PrepareModuleOutput",
    "RowwiseParallel",
    "SequenceParallel",
]


class ParallelStyle:
    """The base of tensor-parallel styles (`_apply(module, device_mesh)`)."""

    src_data_rank = 0

    def _apply(self, module, device_mesh):
        raise NotImplementedError


def _to_dtensor(x, mesh, layout, desired):
    if not isinstance(x, Tensor) or layout is None:
        return x
    d = x if isinstance(x, DTensor) else DTensor.from_local(x, mesh, (layout,), run_check=False)
    if desired is not None:
        (desired,) = _normalize((desired,), mesh, d.dim(), check_length=False)
        if d.placements != (desired,):
            d = d.redistribute(mesh, (desired,))
    return d


def _out(x, mesh, layout, use_local: bool):
    if isinstance(x, DTensor):
        (layout,) = _normalize((layout,), mesh, x.dim(), check_length=False)
        if x.placements != (layout,):
            x = x.redistribute(mesh, (layout,))
        return x.to_local() if use_local else x
    return x


def _shard_params(module, mesh, layouts: dict) -> None:
    for name, p in list(module.named_parameters(recurse=False)):
        d = distribute_tensor(p.detach(), mesh, [layouts[name]])
        module.register_parameter(name, Parameter(d, p.requires_grad))


class _LinearStyle(ParallelStyle):
    _linear: dict
    _embedding: dict
    _input_default = Replicate()
    _output_default = Shard(-1)

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = (input_layouts or self._input_default,)
        self.output_layouts = (output_layouts or self._output_default,)
        self.use_local_output = use_local_output

    def _desired_input(self, module):
        raise NotImplementedError

    def _apply(self, module, device_mesh):
        if isinstance(module, Linear):
            layouts = self._linear
        elif isinstance(module, Embedding):
            layouts = self._embedding
        else:
            raise NotImplementedError(
                f"{type(self).__name__} currently only support nn.Linear and nn.Embedding!"
            )
        _shard_params(module, device_mesh, layouts)
        desired = self._desired_input(module)

        def pre(mod, args):
            return tuple(
                _to_dtensor(a, device_mesh, self.input_layouts[0], desired) if i == 0 else a
                for i, a in enumerate(args)
            )

        def post(mod, args, out):
            return _out(out, device_mesh, self.output_layouts[0], self.use_local_output)

        module.register_forward_pre_hook(pre)
        module.register_forward_hook(post)
        return module


class ColwiseParallel(_LinearStyle):
    """Matches `ColwiseParallel`: output features sharded; Replicate in, Shard(-1) out."""

    _linear = {"weight": Shard(0), "bias": Shard(0)}
    _embedding = {"weight": Shard(1)}

    def _desired_input(self, module):
        return Replicate()


class RowwiseParallel(_LinearStyle):
    """Matches `RowwiseParallel`: input features sharded; Shard(-1) in, Replicate out."""

    _linear = {"weight": Shard(1), "bias": Replicate()}
    _embedding = {"weight": Shard(0)}
    _input_default = Shard(-1)
    _output_default = Replicate()

    def _desired_input(self, module):
        return Replicate() if isinstance(module, Embedding) else Shard(-1)


class SequenceParallel(ParallelStyle):
    """Matches `SequenceParallel`: parameters replicated, activations sharded on the
    sequence dimension."""

    def __init__(self, *, sequence_dim: int = 1, use_local_output: bool = False):
        self.sequence_sharding = (Shard(sequence_dim),)
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        def pre(mod, inputs, mesh):
            return tuple(
                _to_dtensor(a, mesh, self.sequence_sharding[0], None) if i == 0 else a
                for i, a in enumerate(inputs)
            )

        def post(mod, outputs, mesh):
            return (
                outputs.to_local()
                if self.use_local_output and isinstance(outputs, DTensor)
                else outputs
            )

        return distribute_module(
            module,
            device_mesh,
            lambda name, m, mesh: _shard_params(
                m, mesh, {n: Replicate() for n, _ in m.named_parameters(recurse=False)}
            ),
            pre,
            post,
        )


def _as_tuple(x):
    return x if isinstance(x, tuple) or x is None else (x,)


class PrepareModuleInput(ParallelStyle):
    """Matches `PrepareModuleInput`: inputs annotated with `input_layouts` and redistributed
    to `desired_input_layouts`."""

    def __init__(
        self,
        *,
        input_layouts=None,
        desired_input_layouts=None,
        input_kwarg_layouts=None,
        desired_input_kwarg_layouts=None,
        use_local_output: bool = False,
    ):
        self.input_layouts = _as_tuple(input_layouts)
        self.desired_input_layouts = _as_tuple(desired_input_layouts)
        self.input_kwarg_layouts = input_kwarg_layouts or {}
        self.desired_input_kwarg_layouts = desired_input_kwarg_layouts or {}
        self.use_local_output = use_local_output
        if self.input_layouts is not None and len(self.input_layouts) != len(
            self.desired_input_layouts or ()
        ):
            raise AssertionError("input_layouts and desired_input_layouts should have same length!")

    def _prepare(self, x, mesh, layout, desired):
        d = _to_dtensor(x, mesh, layout, desired)
        return d.to_local() if self.use_local_output and isinstance(d, DTensor) else d

    def _apply(self, module, device_mesh):
        def pre(mod, args, kwargs):
            if self.input_layouts is not None:
                if len(args) != len(self.input_layouts):
                    raise ValueError("module inputs and input_layouts should have same length!")
                args = tuple(
                    self._prepare(a, device_mesh, lay, want)
                    for a, lay, want in zip(args, self.input_layouts, self.desired_input_layouts)
                )
            kwargs = {
                k: self._prepare(
                    v,
                    device_mesh,
                    self.input_kwarg_layouts.get(k),
                    self.desired_input_kwarg_layouts.get(k),
                )
                for k, v in kwargs.items()
            }
            return args, kwargs

        module.register_forward_pre_hook(pre, with_kwargs=True)
        return module


class PrepareModuleOutput(ParallelStyle):
    """Matches `PrepareModuleOutput`: outputs annotated with `output_layouts` and
    redistributed to `desired_output_layouts`."""

    def __init__(self, *, output_layouts, desired_output_layouts, use_local_output: bool = True):
        self.output_layouts = _as_tuple(output_layouts)
        self.desired_output_layouts = _as_tuple(desired_output_layouts)
        self.use_local_output = use_local_output
        if len(self.output_layouts) != len(self.desired_output_layouts):
            raise AssertionError(
                "output_layouts and desired_output_layouts should have same length!"
            )

    def _apply(self, module, device_mesh):
        def post(mod, args, outputs):
            single = not isinstance(outputs, tuple)
            outs = (outputs,) if single else outputs
            if len(outs) != len(self.output_layouts):
                raise ValueError("module outputs and output_layouts should have same length!")
            res = []
            for o, lay, want in zip(outs, self.output_layouts, self.desired_output_layouts):
                d = _to_dtensor(o, device_mesh, lay, want)
                res.append(d.to_local() if self.use_local_output and isinstance(d, DTensor) else d)
            return res[0] if single else tuple(res)

        module.register_forward_hook(post)
        return module


class PrepareModuleInputOutput(ParallelStyle):
    """Matches `PrepareModuleInputOutput`: both of the above."""

    def __init__(
        self,
        *,
        input_layouts=None,
        desired_input_layouts=None,
        input_kwarg_layouts=None,
        desired_input_kwarg_layouts=None,
        use_local_input: bool = False,
        output_layouts,
        desired_output_layouts,
        use_local_output: bool = True,
    ):
        self.prepare_module_input = PrepareModuleInput(
            input_layouts=input_layouts,
            desired_input_layouts=desired_input_layouts,
            input_kwarg_layouts=input_kwarg_layouts,
            desired_input_kwarg_layouts=desired_input_kwarg_layouts,
            use_local_output=use_local_input,
        )
        self.prepare_module_output = PrepareModuleOutput(
            output_layouts=output_layouts,
            desired_output_layouts=desired_output_layouts,
            use_local_output=use_local_output,
        )

    def _apply(self, module, device_mesh):
        self.prepare_module_input._apply(module, device_mesh)
        self.prepare_module_output._apply(module, device_mesh)
        return module
