"""An optimizer's first step compiles while the script still works on its gradients.

In a training script's first iteration the optimizer's step programs (one per param group,
tens of kernels each: 0.2-0.5 s of XLA on a CPU) compile when `step()` is called, after
what comes between `backward()` and `step()` (`clip_grad_norm_`'s small programs, logging),
which compiles on the calling thread with another CPU left idle. Once the first backward has
given gradients, the groups' programs are known (the parameters', gradients' and initial
state's shapes), so they start compiling there, in the background, and `step()` waits for
them. Nothing visible changes: the state is not created before `step()` (PyTorch creates it
in the first step), and a step whose gradients turn out otherwise (other parameters, other
shapes) compiles its own program as before.

Only for optimizers running `Optimizer`'s own compiled step whose programs are kept by
jtorch's key (`_stored`: the made executable is what the first call runs), with several
CPUs, outside a trace.
"""

from __future__ import annotations

import weakref

from .. import _programs, _stored

# Optimizers that have not stepped yet and whose first step may be prepared.
_waiting: weakref.WeakSet = weakref.WeakSet()


def note(opt) -> None:
    """Registers an optimizer at its construction."""
    _waiting.add(opt)


def after_backward() -> None:
    """Starts the first-step programs of the optimizers waiting (the engine's hook)."""
    if not _waiting or _programs.tracing():
        return
    if _programs.cpus() < 2 or not _stored.enabled():
        # (nothing would be made ahead: no state is made aside for it either)
        _waiting.clear()
        return
    for opt in list(_waiting):
        if not any(p.grad is not None for g in opt.param_groups for p in g["params"]):
            continue  # (not this backward's: a GAN's other network)
        _waiting.discard(opt)  # (once: a later backward's gradients change nothing)
        futures = []
        made = set()
        for group in opt.param_groups:
            found = opt._prepare_job(group)
            if found is not None and id(found[0]) not in made:
                made.add(id(found[0]))
                future = _programs.background(found[1])
                if future is not None:
                    futures.append(future)
        if futures:
            opt.__dict__["_preparing"] = futures


def wait(opt) -> None:
    """Waits for `opt`'s first-step programs, if they are being made (its `step()`)."""
    _waiting.discard(opt)
    futures = opt.__dict__.pop("_preparing", None)
    for f in futures or ():
        try:
            f.result()
        except Exception:  # noqa: BLE001 (the step compiles and raises on its own)
            pass
