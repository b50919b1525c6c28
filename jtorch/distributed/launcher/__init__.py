"""`torch.distributed.launcher`: launching worker processes (see `api`)."""

from .api import LaunchConfig, elastic_launch, launch_agent  # noqa: F401
