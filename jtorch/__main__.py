"""`python -m jtorch script.py args...`: run a PyTorch script with `torch` meaning jtorch.

Also `python -m jtorch -m package.module args...` and `python -m jtorch -c "code"`.
The script sees `sys.argv` and `__name__ == "__main__"` as under `python`.
"""

import os
import runpy
import sys


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m jtorch (script.py | -m module | -c code) [args...]"
    if not argv or argv[0] in ("-h", "--help"):
        print(usage)
        sys.exit(0 if argv else 2)
    import jtorch
    jtorch.install_as_torch()
    if argv[0] == "-c":
        if len(argv) < 2:
            sys.exit(usage)
        sys.argv = ["-c"] + argv[2:]
        code = compile(argv[1], "<string>", "exec")
        exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
    elif argv[0] == "-m":
        if len(argv) < 2:
            sys.exit(usage)
        sys.argv = [argv[1]] + argv[2:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        script = argv[0]
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
