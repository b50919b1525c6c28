"""`torch.backends.mps`: Apple's Metal backend, never present."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
