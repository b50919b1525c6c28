"""PyTorch's public namespaces against jtorch's: which modules and names jtorch lacks.

    python compat/namespace_scan.py [result.json]

For each module below (torch itself and the submodules scripts import), the names of its
`__all__` (or its public attributes) that the jtorch twin lacks, or that the twin module
does not import. A measurement, not a test: names PyTorch exposes from C++ internals
(JIT IR classes, cuDNN/MIOpen/quantized kernels) are expected to stay missing.
"""

import importlib
import json
import sys
import warnings

import torch  # noqa: F401  (the oracle must be importable)

import jtorch  # noqa: F401

warnings.simplefilter("ignore")

MODULES = [
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.nn.utils.rnn",
    "torch.nn.utils.parametrize",
    "torch.nn.utils.parametrizations",
    "torch.nn.utils.prune",
    "torch.nn.parallel",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.optim.swa_utils",
    "torch.utils",
    "torch.utils.data",
    "torch.utils.checkpoint",
    "torch.utils.tensorboard",
    "torch.utils.hooks",
    "torch.utils.dlpack",
    "torch.utils.benchmark",
    "torch.utils.cpp_extension",
    "torch.utils.model_zoo",
    "torch.utils.mobile_optimizer",
    "torch.utils.bottleneck",
    "torch.utils.collect_env",
    "torch.autograd",
    "torch.autograd.functional",
    "torch.autograd.graph",
    "torch.autograd.profiler",
    "torch.autograd.forward_ad",
    "torch.cuda",
    "torch.cuda.amp",
    "torch.amp",
    "torch.backends",
    "torch.backends.cudnn",
    "torch.backends.mps",
    "torch.backends.cuda",
    "torch.distributions",
    "torch.fft",
    "torch.linalg",
    "torch.special",
    "torch.sparse",
    "torch.onnx",
    "torch.jit",
    "torch.hub",
    "torch.random",
    "torch.testing",
    "torch.profiler",
    "torch.func",
    "torch.export",
    "torch.fx",
    "torch.library",
    "torch.distributed",
    "torch.multiprocessing",
    "torch.quantization",
    "torch.ao.quantization",
    "torch.ao.nn.quantized",
    "torch.nn.quantized",
    "torch.masked",
    "torch.nested",
    "torch.signal",
    "torch.signal.windows",
    "torch.monitor",
    "torch.overrides",
    "torch.types",
    "torch.serialization",
    "torch.storage",
    "torch.compiler",
    "torch.xpu",
    "torch.mps",
    "torch.mtia",
    "torch.accelerator",
    "torch.cpu",
    "torch.futures",
    "torch.package",
    "torch.utils.flop_counter",
    "torch.nn.attention",
    "torch.nn.attention.flex_attention",
]


def public(mod):
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    return sorted(set(names))


out = {}
for name in MODULES:
    try:
        tmod = importlib.import_module(name)
    except Exception as e:
        out[name] = {"torch_import_error": repr(e)[:100]}
        continue
    jname = "jtorch" + name[len("torch") :]
    try:
        jmod = importlib.import_module(jname)
    except Exception as e:
        out[name] = {
            "missing_module": f"{type(e).__name__}: {str(e)[:120]}",
            "n": len(public(tmod)),
        }
        continue
    missing, unsupported = [], []
    for n in public(tmod):
        try:
            if not hasattr(jmod, n):
                missing.append(n)
        except ImportError:  # jtorch._unsupported: importable, says what it lacks
            unsupported.append(n)
    out[name] = {"n": len(public(tmod)), "missing": missing, "unsupported": unsupported}
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
for k, v in out.items():
    if v.get("missing_module"):
        print(f"{k}: MODULE MISSING ({v['missing_module']})")
    elif v.get("unsupported"):
        print(f"{k}: {len(v['unsupported'])}/{v['n']} raise a clear ImportError (absent subsystem)")
    elif v.get("missing"):
        print(f"{k}: {len(v['missing'])}/{v['n']} missing: {v['missing'][:60]}")
