"""`torch.distributed.pipelining`: pipeline parallelism.

A model is cut into stages (`PipelineStage`, one per rank) and a schedule runs microbatches
through them. In today's world of one process there is one stage, which runs every
microbatch: `ScheduleGPipe`/`Schedule1F1B.step(x, target=y, losses=[])` splits the batch on
dim 0, runs forward, the loss per microbatch and its backward, scales the gradients by
1/n_microbatches (PyTorch's `scale_grads`), and returns the merged outputs. Splitting a model
automatically (`pipeline`) needs PyTorch's `torch.export` tracer, which jtorch does not have.
"""

from __future__ import annotations

from enum import Enum

from ..._tensor import Tensor
from .. import distributed_c10d as c10d

__all__ = [
    "PipelineStage",
    "Schedule1F1B",
    "ScheduleGPipe",
    "SplitPoint",
    "build_stage",
    "pipe_split",
    "pipeline",
]


class SplitPoint(Enum):
    """Where a split falls relative to a submodule: before it or after it."""

    BEGINNING = 1
    END = 2


def pipe_split() -> None:
    """Marks a stage boundary for `pipeline`'s tracer; outside tracing it does nothing."""
    return None


def pipeline(module, mb_args, mb_kwargs=None, split_spec=None, split_policy=None):
    raise NotImplementedError(
        "torch.distributed.pipelining.pipeline traces the model with "
        "torch.export, which jtorch does not provide; build stages with "
        "PipelineStage(submodule, ...) instead"
    )


class PipelineStage:
    """Matches `PipelineStage`: this rank's part of the model."""

    def __init__(
        self,
        submodule,
        stage_index: int,
        num_stages: int,
        device,
        input_args=None,
        output_args=None,
        group=None,
        dw_builder=None,
    ):
        if stage_index >= num_stages:
            raise ValueError(f"Stage index {stage_index} is out of range of {num_stages}")
        self.submod = submodule
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.device = device
        self.group = group

    @property
    def is_first(self) -> bool:
        return self.stage_index == 0

    @property
    def is_last(self) -> bool:
        return self.stage_index == self.num_stages - 1


def build_stage(stage_module, stage_index: int, pipe_info, device, group=None) -> PipelineStage:
    return PipelineStage(stage_module, stage_index, pipe_info.num_stages, device, group=group)


def _split(x, n: int) -> list:
    if isinstance(x, Tensor):
        return list(x.tensor_split(n, dim=0))
    return [x] * n


class ScheduleGPipe:
    """Matches `ScheduleGPipe` for a pipeline of one stage (see the module doc)."""

    def __init__(
        self,
        stage: PipelineStage,
        n_microbatches: int,
        loss_fn=None,
        args_chunk_spec=None,
        kwargs_chunk_spec=None,
        output_merge_spec=None,
        scale_grads: bool = True,
    ):
        self._stage = stage
        self._n_microbatches = n_microbatches
        self._loss_fn = loss_fn
        self.scale_grads = scale_grads

    def step(self, *args, target=None, losses: list | None = None, **kwargs):
        stage = self._stage
        if stage.num_stages != 1:
            world = c10d.get_world_size(stage.group) if c10d.is_initialized() else 1
            raise RuntimeError(
                f"a pipeline of {stage.num_stages} stages needs "
                f"{stage.num_stages} ranks; this world has {world}"
            )
        n = self._n_microbatches
        chunks = list(zip(*[_split(a, n) for a in args])) if args else [()] * n
        kw_chunks = (
            [dict(zip(kwargs, vals)) for vals in zip(*[_split(v, n) for v in kwargs.values()])]
            if kwargs
            else [{}] * n
        )
        targets = _split(target, n) if target is not None else [None] * n
        outputs = []
        for mb_args, mb_kwargs, mb_target in zip(chunks, kw_chunks, targets):
            out = stage.submod(*mb_args, **mb_kwargs)
            outputs.append(out)
            if self._loss_fn is not None and mb_target is not None:
                loss = self._loss_fn(out, mb_target)
                if losses is not None:
                    losses.append(loss)
                loss.backward()
        if self._loss_fn is not None and target is not None and self.scale_grads:
            from ... import no_grad

            with no_grad():
                for p in stage.submod.parameters():
                    if p.grad is not None:
                        p.grad.div_(n)
        from ... import cat

        return cat(outputs) if outputs and isinstance(outputs[0], Tensor) else outputs


class Schedule1F1B(ScheduleGPipe):
    """Matches `Schedule1F1B`: with one stage, the same computation as GPipe."""
