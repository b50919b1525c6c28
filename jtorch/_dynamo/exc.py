"""`torch._dynamo.exc`: the compiler's exception types."""


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    """Something a compiled function does cannot be compiled."""


class BackendCompilerFailed(TorchDynamoException):
    pass


class TorchRuntimeError(TorchDynamoException):
    pass


class InternalTorchDynamoError(TorchDynamoException):
    pass


class RestartAnalysis(TorchDynamoException):
    pass


class UserError(Unsupported):
    pass


class UncapturedHigherOrderOpError(TorchDynamoException):
    """A higher-order operator (`scan`, ...) whose function breaks its rules."""


__all__ = [
    "TorchDynamoException",
    "Unsupported",
    "BackendCompilerFailed",
    "TorchRuntimeError",
    "InternalTorchDynamoError",
    "RestartAnalysis",
    "UserError",
    "UncapturedHigherOrderOpError",
]
