"""`python -m jtorch script.py args...`: run a PyTorch script with `torch` meaning jtorch.

Also `python -m jtorch -m package.module args...` and `python -m jtorch -c "code"`.
The script sees `sys.argv`, `sys.path[0]` and `__name__ == "__main__"` as under `python`;
`sys.exit(n)` gives exit status n and an uncaught exception prints its traceback (without
the runner's frames) and exits with 1. Child interpreters (multiprocessing's spawn start
method, DataLoader workers, `subprocess` runs of Python) also get jtorch for `torch`.
"""

import os
import runpy
import sys
import types

USAGE = "usage: python -m jtorch (script.py | -m module | -c code) [args...]"


def _run_main(source, filename: str, file: str = None) -> None:
    """Runs `source` as a fresh `__main__` module, as `python script.py` / `-c` do."""
    main = types.ModuleType("__main__")
    main.__builtins__ = __builtins__
    if file is not None:
        main.__file__ = file
    sys.modules["__main__"] = main
    exec(compile(source, filename, "exec"), main.__dict__)


def _user_traceback(tb):
    """Drops the runner's own frames (this file, runpy) from the front of a traceback."""
    skip = (os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>")
    while tb is not None and tb.tb_frame.f_code.co_filename in skip:
        tb = tb.tb_next
    return tb


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        sys.exit(0 if argv else 2)
    if argv[0] in ("-c", "-m") and len(argv) < 2:
        print(f"Argument expected for the {argv[0]} option\n{USAGE}", file=sys.stderr)
        sys.exit(2)
    import jtorch
    from jtorch._alias import install_in_children

    jtorch.install_as_torch()
    install_in_children()
    try:
        if argv[0] == "-c":
            sys.argv = ["-c"] + argv[2:]
            _run_main(argv[1], "<string>")
        elif argv[0] == "-m":
            sys.argv = [argv[1]] + argv[2:]
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            script = argv[0]
            if not os.path.exists(script):
                print(
                    f"{sys.executable}: can't open file {os.path.abspath(script)!r}: "
                    "[Errno 2] No such file or directory",
                    file=sys.stderr,
                )
                sys.exit(2)
            sys.argv = argv
            if os.path.isfile(script):
                sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
                path = os.path.abspath(script)
                with open(path, "rb") as f:
                    _run_main(f.read(), path, path)
            else:  # a directory or zip file with a __main__.py
                runpy.run_path(script, run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:  # noqa: B036 - reported as the interpreter would
        from jtorch._tracebacks import clean_chain

        clean_chain(e)  # jtorch's internal frames are as invisible as PyTorch's C++ ones
        tb = _user_traceback(e.__traceback__)
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        sys.exit(1)


if __name__ == "__main__":
    main()
