"""Reading BrowserGym / AgentLab pickles without running them.

A pickle is a program: loading one calls whatever globals it names, so an uploaded pickle can run
any code (`os.system`, `builtins.eval`, a class's `__reduce__`). Here nothing it names is ever
imported: `find_class` answers only an explicit list of names, each with a stand-in of this module.
Known BrowserGym / AgentLab classes become `PickledObject`s (the class name and the state the
pickle gives it, nothing of the class runs), numpy arrays become `Array`s of raw bytes (plain
numeric dtypes only, rebuilt without numpy), paths and datetimes become strings. Every other
global is refused with `PickleRefused`, naming it; anything else wrong with the bytes is a
`PickleError`: the only errors that leave `loads` and `load_file`.

Before anything is built, the opcodes are walked once (see `_check_memo`) to bound what the C
unpickler would allocate for a lying memo index.
"""

import datetime
import io
import itertools
import math
import pickle
import pickletools
import re
import struct
import zlib
from dataclasses import dataclass

_GZIP_CHUNK = 1 << 20


class PickleError(ValueError):
    """A pickle that cannot be read safely: malformed, too large, or naming what it may not."""


class PickleRefused(PickleError):
    """The pickle names a global outside the allow-list: it would run code on loading."""


class PickledObject(dict):
    """An instance of an allow-listed class: its name, the arguments and state the pickle gives it.

    A dict subclass, as some AgentLab classes are (messages): their items land in the dict itself;
    list-like items (appended by the pickle) in `elements`."""

    qualname = ""
    args: tuple = ()
    state: object = None
    elements: tuple = ()

    def __init__(self, *args):
        """Called by REDUCE with the pickle's positional arguments (no opcode passes keywords)."""
        super().__init__()
        self.args = args

    def __setstate__(self, state):
        self.state = state

    def extend(self, items):
        """APPEND and APPENDS alike: the unpickler extends whatever has an `extend`."""
        self.__dict__.setdefault("elements", []).extend(items)

    def fields(self) -> dict:
        """The instance's attributes (a dataclass's fields), whether pickled as a dict or with slots."""
        state = self.state
        if isinstance(state, tuple) and len(state) == 2:
            merged = {}
            for part in state:
                if isinstance(part, dict):
                    merged.update(part)
            return merged
        return state if isinstance(state, dict) else {}

    def __repr__(self):
        return f"<{self.qualname}>"


_NUMERIC_DTYPE = re.compile(r"\A(b1|[iu][1248]|f[248]|c(8|16))\Z")


class Dtype:
    """A numpy dtype of plain numbers, by name (`i8`, `f4`, `u1` ...) and byte order."""

    def __init__(self, name="", align=False, copy=True):
        if not isinstance(name, str) or not _NUMERIC_DTYPE.match(name):
            raise PickleRefused(f"refused: numpy dtype {name!r} is not a plain numeric type")
        self.name, self.order = name, "<"

    def __setstate__(self, state):
        if not (isinstance(state, tuple) and len(state) >= 2 and state[1] in ("<", ">", "|", "=")):
            raise PickleError("a numpy dtype with an unreadable state")
        # Fields, names or metadata: a structured or annotated dtype, not a plain number.
        if any(part is not None for part in state[2:5]):
            raise PickleRefused(f"refused: structured numpy dtype {self.name!r}")
        self.order = state[1]

    @property
    def itemsize(self) -> int:
        return int(self.name[1:])

    @property
    def format(self) -> str:
        return ("=" if self.order in ("|", "=") else self.order) + self.name


@dataclass
class Array:
    """A numpy array as the pickle holds it: shape, dtype and the raw bytes (C or Fortran order)."""

    shape: tuple = ()
    dtype: Dtype | None = None
    fortran: bool = False
    data: bytes = b""

    def __setstate__(self, state):
        if not (isinstance(state, tuple) and len(state) == 5):
            raise PickleError("a numpy array with an unreadable state")
        _, shape, dtype, fortran, data = state
        if not isinstance(dtype, Dtype):
            raise PickleRefused("refused: a numpy array of a dtype other than plain numbers")
        if not isinstance(data, (bytes, bytearray)):
            raise PickleRefused("refused: a numpy array of Python objects")
        if not (isinstance(shape, tuple) and all(isinstance(n, int) and n >= 0 for n in shape)):
            raise PickleError("a numpy array with an unreadable shape")
        if math.prod(shape) * dtype.itemsize != len(data):
            raise PickleError(f"a numpy array of shape {shape} and dtype {dtype.name} with {len(data)} bytes")
        self.shape, self.dtype, self.fortran, self.data = shape, dtype, bool(fortran), bytes(data)

    def values(self) -> list:
        """The elements in C order, as Python numbers (small arrays: indexes, rewards)."""
        code = {"b1": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "i8": "q",
                "u8": "Q", "f2": "e", "f4": "f", "f8": "d"}.get(self.dtype.name)
        if code is None:
            raise PickleError(f"numpy dtype {self.dtype.name} is not read as numbers")
        order = "<" if self.dtype.order in ("|", "=") else self.dtype.order
        values = struct.unpack(f"{order}{len(self.data) // self.dtype.itemsize}{code}", self.data)
        if not self.fortran:
            return list(values)
        # Fortran order: the first index varies fastest in the bytes.
        strides = [math.prod(self.shape[:axis]) for axis in range(len(self.shape))]
        return [values[sum(i * stride for i, stride in zip(index, strides))]
                for index in itertools.product(*(range(n) for n in self.shape))]


def _reconstruct(cls, shape=(0,), tag=b"b"):
    if cls is not Array:
        raise PickleRefused("refused: numpy's _reconstruct of something other than an ndarray")
    return Array()


def _scalar(dtype, data=b""):
    """A numpy scalar (`numpy.float64(1.0)`) as a Python number."""
    if not isinstance(dtype, Dtype) or not isinstance(data, bytes) or len(data) != dtype.itemsize:
        raise PickleError("a numpy scalar with an unreadable value")
    array = Array()
    array.__setstate__((1, (), dtype, False, data))
    return array.values()[0]


def _frombuffer(buffer, dtype, shape, order="C"):
    """Protocol 5's way of pickling an array: its bytes, dtype and shape."""
    if not isinstance(buffer, (bytes, bytearray)) or order not in ("C", "F"):
        raise PickleError("a numpy array with an unreadable buffer")
    array = Array()
    array.__setstate__((1, tuple(shape) if isinstance(shape, (tuple, list)) else shape, dtype, order == "F", buffer))
    return array


def _path(*parts):
    if not all(isinstance(part, str) for part in parts):
        raise PickleError("a path of something other than strings")
    return "/".join(parts).replace("//", "/")


def _datetime(*args):
    if not (1 <= len(args) <= 2 and isinstance(args[0], bytes) and len(args[0]) == 10
            and (len(args) == 1 or args[1] is None)):
        raise PickleRefused("refused: a datetime with a time zone or an unreadable value")
    return datetime.datetime(args[0]).isoformat()


def _date(*args):
    if not (len(args) == 1 and isinstance(args[0], bytes) and len(args[0]) == 4):
        raise PickleError("a date with an unreadable value")
    return datetime.date(args[0]).isoformat()


def _copyreg_reconstructor(cls, base, state):
    """Protocol 0/1's way of making an instance: only of the stand-ins above."""
    if not (isinstance(cls, type) and issubclass(cls, PickledObject)) or base is not object:
        raise PickleRefused("refused: copyreg._reconstructor of a class outside the allow-list")
    return cls.__new__(cls)


# The classes of BrowserGym and AgentLab that their pickles (exp_args.pkl, step_N.pkl.gz) hold.
KNOWN_CLASSES = (
    "browsergym.experiments.loop.ExpArgs",
    "browsergym.experiments.loop.EnvArgs",
    "browsergym.experiments.loop.StepInfo",
    "browsergym.experiments.loop.StepTimestamps",
    "browsergym.experiments.agent.AgentInfo",
    "browsergym.experiments.benchmark.base.HighLevelActionSetArgs",
    "browsergym.core.action.highlevel.HighLevelActionSet",
    "agentlab.agents.generic_agent.generic_agent.GenericAgentArgs",
    "agentlab.agents.generic_agent.generic_agent_prompt.GenericPromptFlags",
    "agentlab.agents.dynamic_prompting.ObsFlags",
    "agentlab.agents.dynamic_prompting.ActionFlags",
    "agentlab.agents.most_basic_agent.most_basic_agent.MostBasicAgentArgs",
    "agentlab.agents.visualwebarena.agent.VisualWebArenaAgentArgs",
    "agentlab.llm.chat_api.AzureModelArgs",
    "agentlab.llm.chat_api.OpenAIModelArgs",
    "agentlab.llm.chat_api.OpenRouterModelArgs",
    "agentlab.llm.chat_api.AnthropicModelArgs",
    "agentlab.llm.chat_api.SelfHostedModelArgs",
    "agentlab.llm.llm_utils.Discussion",
    "agentlab.llm.llm_utils.BaseMessage",
    "agentlab.llm.llm_utils.SystemMessage",
    "agentlab.llm.llm_utils.HumanMessage",
    "agentlab.llm.llm_utils.AIMessage",
)
_CLASSES = {name: type(name.rsplit(".", 1)[1], (PickledObject,), {"qualname": name, "__module__": __name__})
            for name in KNOWN_CLASSES}
_STAND_INS = {
    **{tuple(name.rsplit(".", 1)): cls for name, cls in _CLASSES.items()},
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy.core.multiarray", "scalar"): _scalar,
    ("numpy._core.multiarray", "scalar"): _scalar,
    ("numpy.core.numeric", "_frombuffer"): _frombuffer,
    ("numpy._core.numeric", "_frombuffer"): _frombuffer,
    ("numpy", "ndarray"): Array,
    ("numpy", "dtype"): Dtype,
    ("pathlib", "PosixPath"): _path,
    ("pathlib", "WindowsPath"): _path,
    ("pathlib", "PurePosixPath"): _path,
    ("pathlib", "PureWindowsPath"): _path,
    ("datetime", "datetime"): _datetime,
    ("datetime", "date"): _date,
    ("copyreg", "_reconstructor"): _copyreg_reconstructor,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "object"): object,
    ("__builtin__", "set"): set,
    ("__builtin__", "frozenset"): frozenset,
    ("__builtin__", "object"): object,
}


def refusal(module: str, name: str) -> str:
    return f"refused: the pickle calls {module}.{name}, which is not a BrowserGym / AgentLab class"


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        stand_in = _STAND_INS.get((module, name))
        if stand_in is None:
            raise PickleRefused(refusal(module, name))
        return stand_in

    def persistent_load(self, pid):
        raise PickleRefused("refused: the pickle refers to a persistent object")


def _opcode_table() -> tuple[re.Pattern, dict[int, int]]:
    """From pickletools' description of every opcode: a pattern matching a run of opcodes of fixed
    size (skipped at the regex engine's speed), and the argument kind of every other opcode."""
    fixed: dict[int, list[int]] = {}
    others: dict[int, int] = {}
    for opcode in pickletools.opcodes:
        code = opcode.code.encode("latin-1")[0]
        size = opcode.arg.n if opcode.arg else 0
        # LONG_BINPUT's index is checked; STOP ends the walk.
        if size >= 0 and opcode.name not in ("LONG_BINPUT", "STOP"):
            fixed.setdefault(size, []).append(code)
        else:
            others[code] = size
    alternatives = [b"[" + b"".join(re.escape(bytes([code])) for code in codes) + b"]" + b"." * size
                    for size, codes in sorted(fixed.items())]
    # Short strings and bytes (one length byte), the bulk of an accessibility tree, are skipped too.
    short = b"".join(re.escape(bytes([code])) for code, kind in others.items()
                     if kind == pickletools.TAKEN_FROM_ARGUMENT1)
    alternatives.append(b"[" + short + b"](?:" + b"|".join(re.escape(bytes([n])) + b".{%d}" % n for n in range(256))
                        + b")")
    # Possessive: a run is never given back, which spares the engine its backtracking records.
    return re.compile(b"(?:" + b"|".join(alternatives) + b")++", re.S), others


_FIXED_RUN, _OTHER_OPCODES = _opcode_table()
_LENGTH_BYTES = {pickletools.TAKEN_FROM_ARGUMENT1: 1, pickletools.TAKEN_FROM_ARGUMENT4: 4,
                 pickletools.TAKEN_FROM_ARGUMENT4U: 4, pickletools.TAKEN_FROM_ARGUMENT8U: 8}
_TWO_LINES = frozenset(b"ci")  # GLOBAL and INST: module and name, one line each
_STOP, _PUT, _LONG_BINPUT = ord("."), ord("p"), ord("r")


def _decimal(text: bytes) -> int:
    """PUT's index as the unpickler reads it (`int` accepts what CPython's parser does); 0 when unreadable,
    which the unpickler refuses itself."""
    try:
        return int(text)
    except ValueError:
        return 0


def _check_memo(data: bytes) -> None:
    """Walk the opcodes as the unpickler will, refusing a memo index beyond the pickle's size: the
    C unpickler sizes its memo by the largest index it is given, and would allocate (and zero)
    gigabytes for one lying LONG_BINPUT. Runs of fixed-size opcodes (the bulk of a DOM snapshot's
    numbers) are skipped by a regular expression, so the walk costs a fraction of the load."""
    position, end = 0, len(data)
    while True:
        run = _FIXED_RUN.match(data, position)
        if run:
            position = run.end()
        if position >= end:
            raise PickleError("not a readable pickle: it ends before its STOP opcode")
        code = data[position]
        if code == _STOP:
            return
        kind = _OTHER_OPCODES.get(code)
        if kind is None:
            raise PickleError(f"not a readable pickle: unknown opcode {bytes([code])!r} at byte {position}")
        if code == _LONG_BINPUT:
            index, position = int.from_bytes(data[position + 1:position + 5], "little"), position + 5
        elif kind == pickletools.UP_TO_NEWLINE:
            lines = 2 if code in _TWO_LINES else 1
            start = position + 1
            for _ in range(lines):
                newline = data.find(b"\n", position + 1)
                if newline < 0:
                    raise PickleError("not a readable pickle: a line without its end")
                position = newline
            position += 1
            index = _decimal(data[start:position - 1]) if code == _PUT else 0
        else:
            width = _LENGTH_BYTES[kind]
            length = int.from_bytes(data[position + 1:position + 1 + width], "little")
            position += 1 + width + length
            index = 0
        if index > end:
            raise PickleError(f"memo index {index} out of bounds for a pickle of {end:,} bytes")


def loads(data: bytes):
    """The object of a pickle, built from stand-ins only (see the module's docstring)."""
    try:
        _check_memo(data)
        return _Unpickler(io.BytesIO(data)).load()
    except PickleError:
        raise
    except Exception as error:  # noqa: BLE001 - no code of the pickle runs: any other failure is malformed bytes
        raise PickleError(f"not a readable pickle: {type(error).__name__}: {str(error)[:200]}") from None


def gunzip(data: bytes, max_bytes: int) -> bytes:
    """A gzip file's content, refused once it would exceed `max_bytes`."""
    try:
        stream = zlib.decompressobj(wbits=31)
        out = bytearray()
        chunk = stream.decompress(data, _GZIP_CHUNK)
        while True:
            out += chunk
            if len(out) > max_bytes:
                raise PickleError(f"more than {max_bytes:,} bytes once decompressed")
            if not stream.unconsumed_tail:
                break
            chunk = stream.decompress(stream.unconsumed_tail, _GZIP_CHUNK)
        out += stream.flush()
        if len(out) > max_bytes:
            raise PickleError(f"more than {max_bytes:,} bytes once decompressed")
        return bytes(out)
    except zlib.error as error:
        raise PickleError(f"not a readable gzip file: {error}") from None


def load_file(name: str, data: bytes, max_bytes: int):
    """The object of a `.pkl` or `.pkl.gz` file's bytes."""
    if name.endswith(".gz") or data[:2] == b"\x1f\x8b":
        data = gunzip(data, max_bytes)
    return loads(data)

