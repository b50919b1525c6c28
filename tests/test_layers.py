"""jtorch's import graph: the layer table holds, and import cycles only go down.

The graph is file-level: a node per module of `jtorch/`, an edge per import statement,
those inside functions (deferred) included, read with `ast` (nothing is imported).
`from pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg`.

Edges into the root package `jtorch` itself are left out of the cycle count: the root
is the assembled `torch` namespace, which library code reaches the way user code does
(`import jtorch` inside a function, or at the top of an `nn` module that is imported
after the namespace is built); with them every file is in one cycle and the count says
nothing. The layer table is docs/design.md's.
"""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "jtorch")

# Strongly connected components of more than one file. Lower this when a cycle is broken;
# never raise it. 11 measured on 2026-11-25; 7 the same day, once the four from files
# split by size were broken (reduction/scans/statistics/differences, linalg/linalg_norms,
# pointwise/pointwise_math, scatter/masked: their shared helpers are in
# `_ops/_kernel_helpers.py`, and `_ops/__init__.py` lists every family). 2 on 2026-11-26:
# the catch-all `_misc` dissolved (`_layout`, `_knobs`, `_sym`, `_ops/tensor_queries`);
# `fx`'s submodules take their message from `fx/_unavailable`; `cuda`'s from `cuda/_devices`
# (memory, random and streams hold their own functions, as in PyTorch); `amp` asks
# `torch.cuda` through the namespace; `Module.compile` and `OptimizedModule` call
# `jtorch.compile` as PyTorch's call `torch.compile`; `NonDynamicallyQuantizableLinear` lives
# in `nn.modules.linear` (as in PyTorch); `jtorch.distributions` imports `_kl_cross` after
# `kl`; a pickled sparse tensor's rebuild function is set on `sparse._tensor` by the package.
# 1 later that day: the VJP node's backward under `create_graph=True` records its call
# through `_fn_node.record_call`, which the engine sets (as autograd sets `_dispatch`'s
# hooks), instead of importing `_engine`. 0 the same day: the tensor core's circle
# (`_tensor` <-> `_storage`/`_legacy_types`/`_tensor_str`, which reached the ops) is gone:
# `Storage` lives in `_storage`; `_tensor_str` reads forward AD's tangent and
# `_legacy_types` calls the factories through the assembled namespace; `Tensor.__new__`
# (the legacy constructor) calls the default legacy type found there.
MAX_CYCLES = 0

# docs/design.md's layer table, bottom to top: the top-level units (`jtorch.<name>`) of
# each layer. A unit may import, at module level, units of its own layer and below.
LAYERS = [
    (
        "support",
        [
            "_disk_cache",
            "_stored",
            "_programs",
            "_errors",
            "_tracebacks",
            "_meta",
            "_checks",
            "_unsupported",
            "_absent_device",
            "_alias",
            "_zip_reader",
            "_weights_only",
            "_knobs",
            "_sym",
            "torch_version",
            "version",
            "futures",
            "hub",
            "multiprocessing",
            "backends",
            "classes",
            "export",
        ],
    ),
    ("types", ["_dtype", "_device", "_layout", "_random", "_threefry", "_streams", "_utils"]),
    (
        "tensor",
        [
            "_tensor",
            "_views",
            "_storage",
            "_tensor_str",
            "_legacy_types",
            "_torch_function",
            "_rebuild",
            "storage",
            "types",
        ],
    ),
    ("ops", ["_ops", "linalg", "special", "fft", "masked", "signal", "return_types", "random"]),
    ("autograd", ["autograd", "amp"]),
    (
        "transforms",
        [
            "func",
            "_compile",
            "_compile_state",
            "_compile_program",
            "_tracing",
            "_spmd",
            "_control_flow",
        ],
    ),
    (
        "library",
        [
            "nn",
            "optim",
            "data",
            "utils",
            "distributions",
            "distributed",
            "sparse",
            "library",
            "profiler",
            "accelerator",
            "cuda",
            "cpu",
            "mps",
            "mtia",
            "xpu",
            "jit",
            "fx",
            "onnx",
            "testing",
            "overrides",
            "nested",
            "ao",
            "quantization",
            "_C",
            "_dynamo",
            "compiler",
            "_higher_order_ops",
        ],
    ),
    ("edges", ["serialization", "interop", "__main__", "_shim"]),
]
LIBRARY = [name for name, _ in LAYERS].index("library")

# Module-level imports that break the table today, each with why; only ever remove lines.
KNOWN_UPWARD: set = set()


def _modules() -> dict:
    files = {}
    for d, _, fs in os.walk(PKG):
        for f in fs:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                files[rel[: -len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return files


def _imports(tree, deferred=False):
    """(import node, deferred) for every import in `tree`'s body, nested ones included."""
    for node in tree:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    yield sub, True
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, deferred
        else:
            yield from _imports(list(ast.iter_child_nodes(node)), deferred)


def import_graph():
    """(all edges, module-level edges): module -> set of jtorch modules it imports."""
    files = _modules()
    edges = {m: set() for m in files}
    top = {m: set() for m in files}
    for mod, path in files.items():
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        is_pkg = path.endswith("__init__.py")
        for node, deferred in _imports(tree.body):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = mod.split(".")[: None if is_pkg else -1]
                    base = base[: len(base) - node.level + 1]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names
                ]
            for t in targets:
                if t in files and t != mod:
                    edges[mod].add(t)
                    if not deferred:
                        top[mod].add(t)
    return edges, top


def cycles(edges) -> list:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out, key=lambda c: (len(c), c))


def _unit(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_import_cycles_stay_under_the_ceiling():
    edges, _ = import_graph()
    found = cycles({m: {t for t in ts if t != "jtorch"} for m, ts in edges.items()})
    report = "\n".join(f"  {len(c)}: {' '.join(c)}" for c in found)
    assert len(found) <= MAX_CYCLES, f"{len(found)} import cycles (ceiling {MAX_CYCLES}):\n{report}"
    if len(found) < MAX_CYCLES:
        print(f"{len(found)} import cycles: lower MAX_CYCLES in tests/test_layers.py")


def test_every_module_has_a_layer():
    layer_of = {u for _, units in LAYERS for u in units}
    missing = sorted({_unit(m) for m in _modules()} - layer_of - {""})
    assert not missing, f"give these a layer in tests/test_layers.py and docs/design.md: {missing}"


def test_module_level_imports_follow_the_layer_table():
    layer = {u: i for i, (_, units) in enumerate(LAYERS) for u in units}
    layer[""] = len(LAYERS)  # the root `jtorch`: the assembled namespace, above all
    _, top = import_graph()
    bad = []
    for mod, targets in top.items():
        for t in targets:
            src, dst = layer[_unit(mod)], layer[_unit(t)]
            if t == "jtorch":
                dst = LIBRARY  # library code may use the namespace, as user code does
            if dst > src and (mod, t) not in KNOWN_UPWARD:
                bad.append(f"{mod} ({LAYERS[src][0]}) imports {t} ({LAYERS[dst][0]})")
    assert not bad, "imports up the layer table:\n  " + "\n  ".join(sorted(bad))


def test_known_upward_imports_are_still_there():
    # A fixed exception must leave the list, so the list never hides a new one.
    _, top = import_graph()
    gone = [pair for pair in KNOWN_UPWARD if pair[1] not in top.get(pair[0], ())]
    assert not gone, f"remove from KNOWN_UPWARD: {gone}"


def test_the_graph_sees_deferred_imports():
    # `jtorch.data._sampler` imports the namespace inside a function only.
    edges, top = import_graph()
    assert "jtorch" in edges["jtorch.data._sampler"]
    assert "jtorch" not in top["jtorch.data._sampler"]
    assert "jtorch._tensor" in top["jtorch._ops._registry"]


def test_design_document_has_the_same_table():
    # The table lives in docs/design.md for readers and here for the check: they must agree.
    import re

    with open(os.path.join(ROOT, "docs", "design.md")) as f:
        rows = [ln for ln in f if ln.startswith("| ") and "`" in ln.split("|")[2]]
    doc = {}
    for row in rows:
        cells = row.split("|")
        name, units = cells[1].strip(), cells[2]
        if name in ("layer", "values"):
            continue
        doc[name] = set(re.findall(r"`(\w+)`", units))  # `utils.data`, `jax.Array`: no
    assert doc == {name: set(units) for name, units in LAYERS}
