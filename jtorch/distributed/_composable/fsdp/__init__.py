"""`torch.distributed._composable.fsdp`: PyTorch's former path of FSDP2."""

from ...fsdp import (  # noqa: F401
    CPUOffloadPolicy,
    FSDPModule,
    MixedPrecisionPolicy,
    OffloadPolicy,
    UnshardHandle,
    fully_shard,
    register_fsdp_forward_method,
)
