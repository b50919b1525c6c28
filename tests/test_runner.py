"""`python -m jtorch`: scripts, `-m`, `-c`, exit codes, and `torch` in spawned children."""

import os
import subprocess
import sys
import textwrap

import jtorch
from jtorch import _alias


def _run(args, cwd):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    # jtorch itself must stay importable in the child (it may be used from a checkout).
    root = os.path.dirname(os.path.dirname(jtorch.__file__))
    env["PYTHONPATH"] = root
    return subprocess.run(
        [sys.executable, "-m", "jtorch", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))


SPAWN_SCRIPT = """
    import multiprocessing as mp
    import sys

    import torch
    from neighbour import VALUE

    def work(q):
        import torch
        import torch.nn.functional as F
        q.put((torch.__name__, F.__name__, F.relu(torch.tensor([-1.0, 2.0])).tolist()))

    if __name__ == "__main__":
        print("argv", sys.argv, VALUE, torch.__name__)
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        p = ctx.Process(target=work, args=(q,))
        p.start()
        print("child", q.get())
        p.join()
        sys.exit(3)
"""


def test_script_spawn_child_argv_neighbour_exit_code(tmp_path):
    _write(str(tmp_path / "neighbour.py"), "VALUE = 41\n")
    _write(str(tmp_path / "main.py"), SPAWN_SCRIPT)
    other = tmp_path / "elsewhere"
    other.mkdir()
    r = _run([str(tmp_path / "main.py"), "a", "--b"], cwd=str(other))
    assert r.returncode == 3, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"argv [{str(tmp_path / 'main.py')!r}, 'a', '--b'] 41 jtorch"
    assert lines[1] == "child ('jtorch', 'jtorch.nn.functional', [0.0, 2.0])"


def test_module_package_main_relative_import(tmp_path):
    _write(str(tmp_path / "pkg" / "__init__.py"), "")
    _write(str(tmp_path / "pkg" / "util.py"), "X = 3\n")
    _write(
        str(tmp_path / "pkg" / "__main__.py"),
        """
        import sys
        import torch.nn
        from .util import X
        print(__name__, sys.argv[1:], torch.zeros(X).shape, torch.nn.__name__)
    """,
    )
    r = _run(["-m", "pkg", "x", "-y"], cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["__main__ ['x', '-y'] torch.Size([3]) jtorch.nn"]


def test_code_argv_and_uncaught_exception(tmp_path):
    r = _run(
        [
            "-c",
            "import sys, torch; print(sys.argv, torch.ones(2).sum().item());"
            "raise ValueError('bad thing')",
            "p",
        ],
        cwd=str(tmp_path),
    )
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["['-c', 'p'] 2.0"]
    err = r.stderr.splitlines()
    assert err[0] == "Traceback (most recent call last):"
    assert err[1] == '  File "<string>", line 1, in <module>'  # no runner frames
    assert err[-1] == "ValueError: bad thing"


def test_install_in_children_prepends_shim_once(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    monkeypatch.setattr(sys, "path", list(sys.path))
    _alias.install_in_children()
    _alias.install_in_children()
    assert os.environ["PYTHONPATH"] == os.pathsep.join([_alias.SHIM_DIR, "/somewhere"])
    assert sys.path.count(_alias.SHIM_DIR) == 1
    assert os.path.isfile(os.path.join(_alias.SHIM_DIR, "torch", "__init__.py"))


METADATA_SCRIPT = """
    import importlib.metadata as md
    import importlib.util
    import os
    import subprocess
    import sys

    spec = importlib.util.find_spec("torch")
    print(md.version("torch"), md.distribution("torch").metadata["Name"],
          md.version("Torch"), os.path.basename(os.path.dirname(spec.origin)),
          spec.submodule_search_locations is not None)
    import torch
    print(torch.__version__ == md.version("torch"),
          importlib.util.find_spec("torch.nn") is not None)
    print(set(md.packages_distributions()["torch"]))   # a real torch beside it is listed too
    # A child interpreter answers the same before it imports torch.
    code = "import importlib.metadata as md; print(md.version('torch'))"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    print(child.stdout.strip())
"""


def test_package_metadata_answers_as_pytorch(tmp_path):
    # Libraries gate features on these (transformers' _is_package_available, accelerate's).
    # The test environment may hold a real torch too: the alias must win over it.
    _write(str(tmp_path / "meta.py"), METADATA_SCRIPT)
    r = _run([str(tmp_path / "meta.py")], cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    version = str(jtorch.__version__)
    assert r.stdout.splitlines() == [
        f"{version} torch {version} jtorch True",
        "True True",
        "{'torch'}",
        version,
    ]


def test_shim_metadata_is_jtorch_version():
    dist = _alias.torch_distribution()
    assert dist.metadata["Name"] == "torch"
    assert dist.version == str(jtorch.__version__)
    assert dist.read_text("top_level.txt").split() == ["torch"]
