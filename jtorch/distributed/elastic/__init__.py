"""`torch.distributed.elastic`: what torchrun builds on (today: error reporting)."""
