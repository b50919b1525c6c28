"""`torch.distributed.checkpoint.stateful`: objects that give and take their state."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["Stateful", "StatefulT"]


@runtime_checkable
class Stateful(Protocol):
    """Anything with `state_dict()` and `load_state_dict(sd)` (modules, optimizers, ...)."""

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state_dict: dict[str, Any]) -> None: ...


StatefulT = Stateful
