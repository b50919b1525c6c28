"""`torch.jit`: the TorchScript API, without TorchScript.

jtorch runs Python eagerly (and compiles with `torch.compile`); it has no TorchScript
compiler, interpreter or archive format. `script` and `trace` return objects that behave
like PyTorch's where a program can tell and run the original Python code; `save` and `load`
raise a `RuntimeError` pointing at `torch.save(model.state_dict(), path)`. See `_script`.
"""

from ._runtime import (  # noqa: F401
    CompilationUnit,
    Error,
    Final,
    Future,
    ScriptWarning,
    TracerWarning,
    TracingCheckError,
    _overload,
    _overload_method,
    annotate,
    enable_onednn_fusion,
    export,
    fork,
    fuser,
    ignore,
    interface,
    isinstance,
    last_executed_optimized_graph,
    onednn_fusion_enabled,
    optimized_execution,
    script_if_tracing,
    script_method,
    set_fusion_strategy,
    strict_fusion,
    unused,
    wait,
)
from ._script import (  # noqa: F401
    Attribute,
    RecursiveScriptModule,
    ScriptFunction,
    ScriptModule,
    TopLevelTracedModule,
    TracedModule,
    freeze,
    is_scripting,
    is_tracing,
    load,
    optimize_for_inference,
    run_frozen_optimizations,
    save,
    script,
    trace,
    trace_module,
)
