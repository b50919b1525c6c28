"""The unpickler of `torch.load(weights_only=True)`: PyTorch's opcode set and checks.

PyTorch does not restrict Python's unpickler; it runs its own small one
(`torch/_weights_only_unpickler.py`) that knows the protocol-2 opcodes `torch.save`
writes and nothing else, looks every `GLOBAL` up in an allowlist, calls (`REDUCE`,
`NEWOBJ`) only allowlisted callables, builds (`BUILD`) only allowlisted types, and appends
and sets items only into lists and dicts. This one behaves the same way, so a checkpoint
loads here exactly when it loads there, and fails with the same exception and message;
the allowlist itself (torch's names mapped to jtorch's objects) comes from the caller.
"""

from __future__ import annotations

import collections
import pickle
import struct
import sys
import warnings

__all__ = ["Unpickler", "blocked_modules", "unsupported_global"]

blocked_modules = ("sys", "os", "posix", "nt")  # never loadable, even when allowlisted

# Names that Python 2 pickles (protocol 2, which torch.save writes) use for Python 3's:
# PyTorch's copy of `_compat_pickle`'s table, so `__builtin__.set` means `builtins.set`.
_IMPORT_MAPPING = {
    "__builtin__": "builtins",
    "copy_reg": "copyreg",
    "Queue": "queue",
    "repr": "reprlib",
    "_abcoll": "collections.abc",
    "UserDict": "collections",
    "UserList": "collections",
    "UserString": "collections",
    "whichdb": "dbm",
    "StringIO": "io",
    "cStringIO": "io",
}
_NAME_MAPPING = {
    ("__builtin__", "xrange"): ("builtins", "range"),
    ("__builtin__", "reduce"): ("functools", "reduce"),
    ("__builtin__", "intern"): ("sys", "intern"),
    ("__builtin__", "unichr"): ("builtins", "chr"),
    ("__builtin__", "unicode"): ("builtins", "str"),
    ("__builtin__", "long"): ("builtins", "int"),
    ("itertools", "izip"): ("builtins", "zip"),
    ("itertools", "imap"): ("builtins", "map"),
    ("itertools", "ifilter"): ("builtins", "filter"),
    ("itertools", "ifilterfalse"): ("itertools", "filterfalse"),
    ("itertools", "izip_longest"): ("itertools", "zip_longest"),
    ("UserDict", "IterableUserDict"): ("collections", "UserDict"),
    ("UserList", "UserList"): ("collections", "UserList"),
    ("UserString", "UserString"): ("collections", "UserString"),
}


def python3_name(module: str, name: str) -> tuple[str, str]:
    """The Python 3 name of a global a protocol-2 pickle writes by its Python 2 name."""
    if (module, name) in _NAME_MAPPING:
        return _NAME_MAPPING[(module, name)]
    return _IMPORT_MAPPING.get(module, module), name


def unsupported_global(full_path: str) -> str:
    """PyTorch's message for a global outside the allowlist (`builtins.` left off)."""
    if full_path.startswith("builtins."):
        full_path = full_path[len("builtins.") :]
    return (
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
        f"Please use `torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist "
        "this global if you trust this class/function."
    )


_DICT_TYPES = (dict, collections.OrderedDict, collections.Counter)


class Unpickler:
    """PyTorch's weights-only unpickler over an allowlist.

    Args:
        file: a binary file holding the pickle.
        allowed: `"module.name"` -> the object that global means (torch's and the user's).
        persistent_load: called with each persistent id (a `('storage', ...)` tuple).
        special: `"module.name"` -> (exception type, message) for globals that are known
            but cannot be loaded (PyTorch's nested tensors and DTensors, which need an
            import there; what jtorch lacks).
    """

    def __init__(
        self,
        file,
        allowed: dict,
        persistent_load,
        special: dict | None = None,
        encoding: str = "utf-8",
    ):
        self._read = file.read
        self._readline = file.readline
        self._allowed = allowed
        self._callable = {id(v) for v in allowed.values()}
        self._persistent_load = persistent_load
        self._special = special or {}
        self._encoding = encoding
        self.memo: dict = {}

    def load(self):
        """Reads one pickle; returns its object."""
        self._metastack: list = []
        self._stack: list = []
        read = self._read
        dispatch = self._dispatch
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = dispatch.get(key[0])
            if op is None:
                raise pickle.UnpicklingError(f"Unsupported operand {key[0]}")
            if op is Unpickler._stop:
                return self._stack.pop()
            op(self)

    # -- risky opcodes -----------------------------------------------------

    def _global(self):
        module = self._readline()[:-1].decode("utf-8")
        name = self._readline()[:-1].decode("utf-8")
        module, name = python3_name(module, name)
        full_path = f"{module}.{name}"
        if module in blocked_modules:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {full_path} whose module {module} is blocked."
            )
        obj = self._allowed.get(full_path, _MISSING)
        if obj is _MISSING:
            if full_path in self._special:
                exc_type, message = self._special[full_path]
                raise exc_type(message)
            raise pickle.UnpicklingError(unsupported_global(full_path))
        self._stack.append(obj)

    def _newobj(self):
        args = self._stack.pop()
        cls = self._stack.pop()
        if id(cls) not in self._callable:
            raise pickle.UnpicklingError(
                "Can only create new object for nn.Parameter or classes allowlisted via "
                f"`add_safe_globals` but got {cls}"
            )
        self._stack.append(cls.__new__(cls, *args))

    def _reduce(self):
        args = self._stack.pop()
        func = self._stack[-1]
        if id(func) not in self._callable:
            msg = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                msg += f" which belongs to {func.__self__}"
            raise pickle.UnpicklingError(msg)
        self._stack[-1] = func(*args)

    def _build(self):
        state = self._stack.pop()
        inst = self._stack[-1]
        if type(inst) is collections.OrderedDict:
            inst.__dict__.update(state)
            return
        if id(type(inst)) not in self._callable:
            raise pickle.UnpicklingError(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {type(inst)}"
            )
        if hasattr(inst, "__setstate__"):
            inst.__setstate__(state)
            return
        slotstate = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slotstate = state
        if state:
            inst.__dict__.update(state)
        if slotstate:
            for k, v in slotstate.items():
                setattr(inst, k, v)

    def _binpersid(self):
        pid = self._stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise pickle.UnpicklingError(
                f"persistent_load id must be tuple or int, but got {type(pid)}"
            )
        if type(pid) is tuple and len(pid) > 0:
            kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
            if kind != "storage":
                raise pickle.UnpicklingError(
                    f"Only persistent_load of storage is allowed, but got {type(pid[0])}"
                )
        self._stack.append(self._persistent_load(pid))

    # -- containers --------------------------------------------------------

    def _pop_mark(self) -> list:
        items = self._stack
        self._stack = self._metastack.pop()
        return items

    def _mark(self):
        self._metastack.append(self._stack)
        self._stack = []

    def _append(self):
        item = self._stack.pop()
        target = self._stack[-1]
        if type(target) is not list:
            raise pickle.UnpicklingError(f"Can only append to lists, but got {type(target)}")
        target.append(item)

    def _appends(self):
        items = self._pop_mark()
        target = self._stack[-1]
        if type(target) is not list:
            raise pickle.UnpicklingError(f"Can only extend lists, but got {type(target)}")
        target.extend(items)

    def _dict_target(self, opcode: str):
        target = self._stack[-1]
        if type(target) not in _DICT_TYPES:
            raise pickle.UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                f"but got {type(target)}"
            )
        return target

    def _setitem(self):
        value, key = self._stack.pop(), self._stack.pop()
        self._dict_target("SETITEM")[key] = value

    def _setitems(self):
        items = self._pop_mark()
        target = self._dict_target("SETITEMS")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _tuple(self):
        items = self._pop_mark()  # first: it changes which list self._stack is
        self._stack.append(tuple(items))

    def _tuple1(self):
        self._stack[-1] = (self._stack[-1],)

    def _tuple2(self):
        self._stack[-2:] = [(self._stack[-2], self._stack[-1])]

    def _tuple3(self):
        self._stack[-3:] = [(self._stack[-3], self._stack[-2], self._stack[-1])]

    # -- values ------------------------------------------------------------

    def _binint(self):
        self._stack.append(struct.unpack("<i", self._read(4))[0])

    def _binint1(self):
        self._stack.append(self._read(1)[0])

    def _binint2(self):
        self._stack.append(struct.unpack("<H", self._read(2))[0])

    def _binfloat(self):
        self._stack.append(struct.unpack(">d", self._read(8))[0])

    def _long1(self):
        n = self._read(1)[0]
        self._stack.append(pickle.decode_long(self._read(n)))

    def _binunicode(self):
        (n,) = struct.unpack("<I", self._read(4))
        if n > sys.maxsize:
            raise pickle.UnpicklingError("String is too long")
        self._stack.append(str(self._read(n), "utf-8", "surrogatepass"))

    def _short_binstring(self):
        n = self._read(1)[0]
        data = self._read(n)
        self._stack.append(
            data if self._encoding == "bytes" else data.decode(self._encoding, "strict")
        )

    def _binget(self):
        self._stack.append(self.memo[self._read(1)[0]])

    def _long_binget(self):
        self._stack.append(self.memo[struct.unpack("<I", self._read(4))[0]])

    def _binput(self):
        self.memo[self._read(1)[0]] = self._stack[-1]

    def _long_binput(self):
        self.memo[struct.unpack("<I", self._read(4))[0]] = self._stack[-1]

    def _proto(self):
        proto = self._read(1)[0]
        if proto != 2:
            warnings.warn(
                f"Detected pickle protocol {proto} in the checkpoint, which was not the default "
                "pickle protocol used by `torch.load` (2). The weights_only Unpickler might not "
                "support all instructions implemented by this protocol, please file an issue "
                "for adding support if you encounter this.",
                stacklevel=4,
            )

    def _stop(self):
        pass

    def _push(value):
        def op(self):
            self._stack.append(value() if callable(value) else value)

        return op

    _dispatch = {
        pickle.GLOBAL[0]: _global,
        pickle.NEWOBJ[0]: _newobj,
        pickle.REDUCE[0]: _reduce,
        pickle.BUILD[0]: _build,
        pickle.BINPERSID[0]: _binpersid,
        pickle.MARK[0]: _mark,
        pickle.APPEND[0]: _append,
        pickle.APPENDS[0]: _appends,
        pickle.SETITEM[0]: _setitem,
        pickle.SETITEMS[0]: _setitems,
        pickle.TUPLE[0]: _tuple,
        pickle.TUPLE1[0]: _tuple1,
        pickle.TUPLE2[0]: _tuple2,
        pickle.TUPLE3[0]: _tuple3,
        pickle.NONE[0]: _push(None),
        pickle.NEWFALSE[0]: _push(False),
        pickle.NEWTRUE[0]: _push(True),
        pickle.EMPTY_TUPLE[0]: _push(()),
        pickle.EMPTY_LIST[0]: _push(list),
        pickle.EMPTY_DICT[0]: _push(dict),
        pickle.EMPTY_SET[0]: _push(set),
        pickle.BININT[0]: _binint,
        pickle.BININT1[0]: _binint1,
        pickle.BININT2[0]: _binint2,
        pickle.BINFLOAT[0]: _binfloat,
        pickle.LONG1[0]: _long1,
        pickle.BINUNICODE[0]: _binunicode,
        pickle.SHORT_BINSTRING[0]: _short_binstring,
        pickle.BINGET[0]: _binget,
        pickle.LONG_BINGET[0]: _long_binget,
        pickle.BINPUT[0]: _binput,
        pickle.LONG_BINPUT[0]: _long_binput,
        pickle.PROTO[0]: _proto,
        pickle.STOP[0]: _stop,
    }
    del _push


_MISSING = object()
