"""`torch.distributed.algorithms.join`: training with uneven inputs across ranks.

Inside `Join`, ranks that run out of inputs shadow the collectives of those still training
(`JoinHook.main_hook`) until all have joined, then each hook's `post_hook` runs. Over one rank
every rank joins at once: no shadowing, and the post hooks run on leaving the block.
"""

from __future__ import annotations

import abc

from .. import distributed_c10d as c10d

__all__ = ["Join", "JoinHook", "Joinable"]


class JoinHook:
    """Matches `JoinHook`: what a joined rank runs (`main_hook`) and runs last (`post_hook`)."""

    def main_hook(self) -> None:
        """Shadows one collective of a non-joined rank."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Runs once all ranks have joined."""


class Joinable(abc.ABC):
    """Matches `Joinable`: a class whose instances take part in `Join`."""

    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abc.abstractmethod
    def join_hook(self, **kwargs) -> JoinHook: ...

    @property
    @abc.abstractmethod
    def join_device(self): ...

    @property
    @abc.abstractmethod
    def join_process_group(self): ...


class _JoinConfig:
    def __init__(self, enable: bool, throw_on_early_termination: bool, is_first_joinable: bool):
        self.enable = enable
        self.throw_on_early_termination = throw_on_early_termination
        self.is_first_joinable = is_first_joinable

    @staticmethod
    def construct_disabled_join_config() -> _JoinConfig:
        return _JoinConfig(False, False, False)


class Join:
    """Matches `torch.distributed.algorithms.Join` (see the module doc)."""

    def __init__(
        self,
        joinables: list,
        enable: bool = True,
        throw_on_early_termination: bool = False,
        **kwargs,
    ):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, i == 0)
        devices = {j.join_device for j in joinables}
        if len(devices) > 1:
            raise ValueError("Using join context manager with multiple devices is not supported")

    def __enter__(self) -> Join:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self._enable or exc_type is not None:
            return
        # One rank: every rank has joined already, and this one is the last to join.
        for hook in self._join_hooks:
            hook.post_hook(True)

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Called by a joinable before each collective: the all-reduce that counts the ranks
        still training (here one); returns its work handle for the first joinable."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(
                f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor"
            )
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        from ... import ones

        work = c10d.all_reduce(
            ones(1, device=joinable.join_device), group=joinable.join_process_group, async_op=True
        )
        return work
