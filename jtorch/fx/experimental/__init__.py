"""`torch.fx.experimental`."""
