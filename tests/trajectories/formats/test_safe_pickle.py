"""The restricted unpickler: every BrowserGym / AgentLab sample reads, nothing else runs."""

import gzip
import math
import os
import pickle
import pickletools
import struct
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from trajectories.formats import safe_pickle
from trajectories.formats.safe_pickle import (Array, Dtype, PickledObject, PickleError, PickleRefused, _check_memo,
                                              gunzip, load_file, loads)


@pytest.fixture
def episodes(shared_data):
    return shared_data / "agent-outputs" / "browsergym-agentlab"


def _pickles(folder):
    return sorted(path for path in folder.rglob("*") if path.name.endswith((".pkl", ".pkl.gz")))


def test_every_sample_pickle_reads_as_plain_records(episodes):
    loaded = {path.relative_to(episodes).as_posix(): load_file(path.name, path.read_bytes(), 1 << 30)
              for path in _pickles(episodes)}
    assert len(loaded) == 9
    exp_args = loaded["2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-dialog_28/exp_args.pkl"]
    assert isinstance(exp_args, PickledObject) and exp_args.qualname == "browsergym.experiments.loop.ExpArgs"
    fields = exp_args.fields()
    assert fields["env_args"].fields()["task_name"] == "miniwob.click-dialog"
    assert fields["env_args"].fields()["task_seed"] == 28
    assert fields["exp_date"] == "2025-01-22T11:03:29.117522"
    assert fields["exp_dir"].endswith("/2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-dialog_28")
    step = loaded["2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-dialog_28/step_0.pkl.gz"].fields()
    assert step["action"] == "click('20')"
    index = step["obs"]["active_page_index"]
    assert isinstance(index, Array) and (index.shape, index.dtype.name, index.values()) == ((1,), "i8", [0])
    discussion = step["agent_info"].fields()["chat_messages"].fields()["messages"]
    assert [message["role"] for message in discussion] == ["system", "user", "assistant"]
    assert loaded["2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-checkboxes_7/goal_object.pkl.gz"] \
        == [{"type": "text", "text": "Select Neb and click Submit."}]


def test_the_samples_read_without_browsergym_agentlab_or_numpy(episodes):
    script = (
        "import sys, pathlib\n"
        "from trajectories.formats.safe_pickle import load_file\n"
        f"for path in pathlib.Path({str(episodes)!r}).rglob('*.pkl*'):\n"
        "    load_file(path.name, path.read_bytes(), 1 << 30)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'browsergym', 'agentlab'}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            cwd=os.getcwd())
    assert result.stdout.strip() == "[]"


class _Gadget:
    """Pickles as a call of `func(*args)`, as an attacker's file would."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _marker_gadgets(marker):
    command = f"touch {marker}"
    return {
        "os.system": _Gadget(os.system, command),
        "builtins.eval": _Gadget(eval, f"open({str(marker)!r}, 'w').close()"),
        "builtins.exec": _Gadget(exec, f"open({str(marker)!r}, 'w').close()"),
        "subprocess.Popen": _Gadget(subprocess.Popen, ["touch", str(marker)]),
        "importlib.import_module": _Gadget(__import__("importlib").import_module, "os"),
    }


@pytest.mark.parametrize("name", ["os.system", "builtins.eval", "builtins.exec", "subprocess.Popen",
                                  "importlib.import_module"])
@pytest.mark.parametrize("wrapping", ["bare", "in a list", "in a dict", "protocol 0", "gzip"])
def test_a_gadget_is_refused_and_runs_nothing(tmp_path, name, wrapping):
    marker = tmp_path / "ran"
    gadget = _marker_gadgets(marker)[name]
    payload = {"bare": gadget, "in a list": [1, [gadget]], "in a dict": {"obs": {"axtree_txt": gadget}},
               "protocol 0": gadget, "gzip": gadget}[wrapping]
    data = pickle.dumps(payload, protocol=0 if wrapping == "protocol 0" else 4)
    if wrapping == "gzip":
        data = gzip.compress(data)
    with pytest.raises(PickleRefused, match=r"\Arefused: the pickle calls "):
        load_file("step_0.pkl.gz" if wrapping == "gzip" else "exp_args.pkl", data, 1 << 20)
    assert not marker.exists()


def test_a_gadget_inside_an_allowed_record_is_refused(tmp_path, episodes):
    """An allowed class whose state holds a call: the allowed global does not admit the rest."""
    marker = tmp_path / "ran"
    body = pickle.dumps(_Gadget(os.system, f"touch {marker}"), protocol=4)
    # A StepInfo (allowed) built with the gadget as its state, written opcode by opcode.
    head = (b"\x80\x04\x8c\x1bbrowsergym.experiments.loop\x8c\x08StepInfo\x93)\x81")
    crafted = head + body[2:-1] + b"b."
    with pytest.raises(PickleRefused, match="posix.system|os.system"):
        loads(crafted)
    assert not marker.exists()


def test_a_global_named_from_the_memo_is_refused_too(tmp_path):
    """STACK_GLOBAL whose module string comes back from the memo, not straight from the stream."""
    crafted = (b"\x80\x04\x8c\x02os\x94\x8c\x06system\x94\x8c\x04ls /\x94"
               b"h\x00h\x01\x93h\x02\x85R.")
    with pytest.raises(PickleRefused, match="os.system"):
        loads(crafted)


def test_numpy_object_and_structured_arrays_are_refused_by_their_dtype_name_and_plain_ones_read():
    numpy = pytest.importorskip("numpy")
    with pytest.raises(PickleRefused, match="'O8' is not a plain numeric type"):
        loads(pickle.dumps(numpy.array([1, "a"], dtype=object), protocol=4))
    with pytest.raises(PickleRefused, match="'V4'"):
        loads(pickle.dumps(numpy.zeros(2, dtype=[("a", "i4")]), protocol=4))
    plain = loads(pickle.dumps(numpy.arange(6, dtype=">i4").reshape(2, 3), protocol=4))
    assert (plain.shape, plain.dtype.format, plain.values()) == ((2, 3), ">i4", [0, 1, 2, 3, 4, 5])
    assert loads(pickle.dumps(numpy.float64(0.5), protocol=4)) == 0.5


# Pickles numpy never writes, but a file can: written opcode by opcode, so that they pass the checks on
# names and reach the checks behind them.

def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _value(value) -> bytes:
    """The opcodes that push `value` (protocol 3, no PROTO and no STOP)."""
    return pickle.dumps(value, protocol=3)[2:-1]


def _dtype(name: str, state: tuple) -> bytes:
    return _global("numpy", "dtype") + _value((name, False, True)) + b"R" + _value(state) + b"b"


_PLAIN_I8 = (3, "<", None, None, None, -1, -1, 0)  # numpy's state of dtype('<i8')


def _array(dtype: bytes, data) -> bytes:
    """numpy's `_reconstruct(ndarray, (0,), b'b')` given the state (1, shape (1,), dtype, C order, data)."""
    empty = _global("numpy.core.multiarray", "_reconstruct") + _global("numpy", "ndarray") + _value((0,)) \
        + _value(b"b") + b"\x87R"
    return b"\x80\x03" + empty + b"(" + _value(1) + _value((1,)) + dtype + _value(False) + _value(data) + b"tb."


def test_a_hand_written_plain_array_reads():
    array = loads(_array(_dtype("i8", _PLAIN_I8), (7).to_bytes(8, "little")))
    assert (array.shape, array.dtype.format, array.values()) == ((1,), "<i8", [7])


def test_an_array_whose_data_is_not_bytes_is_refused_as_an_array_of_objects():
    # Eight small numbers would make eight bytes: a list is refused, not read as the bytes it spells.
    with pytest.raises(PickleRefused, match="a numpy array of Python objects"):
        loads(_array(_dtype("i8", _PLAIN_I8), [1, 2, 3, 4, 5, 6, 7, 8]))


def test_an_array_of_something_other_than_a_dtype_is_refused():
    with pytest.raises(PickleRefused, match="a numpy array of a dtype other than plain numbers"):
        loads(_array(_value("i8"), (7).to_bytes(8, "little")))


@pytest.mark.parametrize("state", [
    (3, "<", None, ("a",), {"a": ("i8", 0)}, 8, 1, 16),  # named fields
    (3, "<", ("i4", (2,)), None, None, 8, 4, 0),  # a subarray
    (3, "<", None, None, {"a": 1}, -1, -1, 0),  # fields without names
])
def test_a_plain_dtype_name_with_a_structured_state_is_refused(state):
    with pytest.raises(PickleRefused, match="structured numpy dtype 'i8'"):
        loads(b"\x80\x03" + _dtype("i8", state) + b".")
    with pytest.raises(PickleRefused, match="structured numpy dtype 'i8'"):
        loads(_array(_dtype("i8", state), (7).to_bytes(8, "little")))


def _copyreg_instance(cls: bytes, base: bytes) -> bytes:
    """Protocol 0/1's `copyreg._reconstructor(cls, base, None)`."""
    return b"\x80\x02" + _global("copyreg", "_reconstructor") + b"(" + cls + base + b"Nt" + b"R."


STEP_INFO = _global("browsergym.experiments.loop", "StepInfo")


def test_copyreg_makes_an_allowed_class_on_object_and_nothing_else():
    made = loads(_copyreg_instance(STEP_INFO, _global("builtins", "object")))
    assert isinstance(made, PickledObject) and made.qualname == "browsergym.experiments.loop.StepInfo"
    refused = "refused: copyreg._reconstructor of a class outside the allow-list"
    # An allowed class on an allowed base other than object: copyreg would call set.__init__ on it.
    with pytest.raises(PickleRefused, match=refused):
        loads(_copyreg_instance(STEP_INFO, _global("builtins", "set")))
    # An allowed global that is not an allowed class.
    with pytest.raises(PickleRefused, match=refused):
        loads(_copyreg_instance(_global("numpy", "ndarray"), _global("builtins", "object")))
    with pytest.raises(PickleRefused, match=refused):
        loads(_copyreg_instance(_global("pathlib", "PosixPath"), _global("builtins", "object")))


def test_persistent_ids_and_extension_codes_are_refused():
    with pytest.raises(PickleRefused, match="persistent"):
        loads(b"\x80\x04\x8c\x01x\x94Q.")
    with pytest.raises(PickleError, match="extension code"):
        loads(b"\x80\x04\x82\x01.")


@pytest.mark.parametrize("crafted", [
    b"\x80\x04K\x01r" + struct.pack("<I", 0xFFFFFFF0) + b".",
    b"\x80\x04K\x01p 4000000000\n.",
    # Hidden behind a string, a frame and a run of numbers: the walk keeps in step with the unpickler.
    b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x02r\xff]K\x01K\x02er" + struct.pack("<I", 1 << 30) + b".",
])
def test_a_huge_memo_index_is_refused_before_the_unpickler_allocates(crafted):
    with pytest.raises(PickleError, match="memo index"):
        loads(crafted)


def test_a_gzip_bomb_stops_at_the_limit():
    bomb = gzip.compress(b"\x00" * (8 << 20))
    with pytest.raises(PickleError, match="more than 1,048,576 bytes once decompressed"):
        gunzip(bomb, 1 << 20)


# What a pickle may hold once read: plain data, the stand-ins' instances and the stand-ins themselves (a
# pickle may name an allowed global without calling it); never an object of any other class.
PLAIN = (type(None), bool, int, float, str, bytes, bytearray, list, tuple, dict, set, frozenset)
STAND_INS = tuple(safe_pickle._STAND_INS.values())


def _assert_built_from_allowed(value, seen=None) -> None:
    seen = set() if seen is None else seen
    if id(value) in seen:  # the memo can make a list hold itself
        return
    seen.add(id(value))
    if any(value is stand_in for stand_in in STAND_INS):
        return
    kind = type(value)
    assert kind in PLAIN or kind is object or kind in (Array, Dtype) or (
        issubclass(kind, PickledObject) and kind in safe_pickle._CLASSES.values()), f"{kind!r} was built"
    if isinstance(value, dict):
        for key, item in value.items():
            _assert_built_from_allowed(key, seen)
            _assert_built_from_allowed(item, seen)
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _assert_built_from_allowed(item, seen)
    if isinstance(value, PickledObject):
        for part in (value.args, value.state, tuple(value.elements), value.__dict__):
            _assert_built_from_allowed(part, seen)
    if isinstance(value, Array):
        assert isinstance(value.dtype, Dtype) and isinstance(value.data, bytes) and all(
            isinstance(n, int) for n in value.shape)
        assert len(value.data) == math.prod(value.shape) * value.dtype.itemsize


def _load_or_refuse(data: bytes, read=loads):
    """What `read` gives for `data`: only the module's error may leave it, and what it loads is built
    from the allowed set."""
    try:
        loaded = read(data)
    except PickleError:
        return None
    _assert_built_from_allowed(loaded)
    return loaded


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_fuzz_random_bytes_load_only_allowed_types_or_raise_the_modules_error(data):
    for candidate in (data, b"\x80\x04" + data, gzip.compress(data)):
        _load_or_refuse(candidate, lambda raw: load_file("step_0.pkl.gz", raw, 1 << 20))


PLAIN_DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: (st.lists(inner, max_size=4) | st.tuples(inner, inner)
                   | st.dictionaries(st.text(max_size=5), inner, max_size=4)
                   | st.frozensets(st.integers() | st.text(max_size=5), max_size=4)
                   | st.sets(st.integers() | st.text(max_size=5), max_size=4)),
    max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(PLAIN_DATA, st.integers(min_value=3, max_value=5))  # protocol 2 spells bytes as a call of codecs
def test_plain_data_pickled_by_python_reads_back_equal(value, protocol):
    assert loads(pickle.dumps(value, protocol=protocol)) == value


def _sample_pickles():
    from tests.conftest import SHARED_DATA

    folder = SHARED_DATA / "agent-outputs" / "browsergym-agentlab"
    return [gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
            for path in sorted(folder.rglob("*.pkl*"))]


_SAMPLES = _sample_pickles()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(_SAMPLES))), st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)),
                                                       min_size=1, max_size=8),
       st.integers(min_value=0))
def test_fuzz_changed_sample_pickles_load_only_allowed_types_or_raise_the_modules_error(which, changes, cut):
    data = bytearray(_SAMPLES[which])
    for position, value in changes:
        data[position % len(data)] = value
    loaded = [_load_or_refuse(candidate) for candidate in (bytes(data), bytes(data[: cut % len(data)]))]
    if all(data[position % len(data)] == _SAMPLES[which][position % len(data)] for position, _ in changes):
        assert loaded[0] is not None  # changed to the same bytes: the sample itself, which reads


def test_the_opcode_table_skips_fixed_size_opcodes_and_short_strings_whole_and_stops_at_the_rest():
    """Built again (the module built its table at import) and checked opcode by opcode against pickletools."""
    run, others = safe_pickle._opcode_table()
    known = set()
    for opcode in pickletools.opcodes:
        code = opcode.code.encode("latin-1")
        known.add(code[0])
        size = opcode.arg.n if opcode.arg else 0
        if size >= 0 and opcode.name not in ("LONG_BINPUT", "STOP"):
            assert run.fullmatch((code + b"\x07" * size) * 2), opcode.name  # two in a row: one run
            assert code[0] not in others, opcode.name
        elif size == pickletools.TAKEN_FROM_ARGUMENT1:  # a short string: its length byte, then its bytes
            assert run.fullmatch(code + b"\x03abc" + code + b"\x00"), opcode.name
            assert others[code[0]] == size, opcode.name
        else:
            assert run.match(code + b"\x00" * 8) is None and others[code[0]] == size, opcode.name
    assert all(run.match(bytes([byte])) is None for byte in range(256) if byte not in known)


def test_the_memo_walk_ends_where_pickletools_sees_the_stop():
    """The walk keeps in step with the opcodes of every sample (pickletools reads them one by one)."""
    for data in _SAMPLES:
        *_, (opcode, _, stop) = pickletools.genops(data)
        assert opcode.name == "STOP"
        _check_memo(data)
        with pytest.raises(PickleError, match="ends before its STOP"):
            _check_memo(data[:stop])


# What each stand-in makes, and the exact reason it gives for refusing ------------------------------------

def _refused(data: bytes, message: str, error=PickleError) -> None:
    with pytest.raises(error) as raised:
        loads(data)
    assert str(raised.value) == message


def test_an_allowed_class_keeps_its_arguments_and_takes_appended_items():
    made = loads(b"\x80\x03" + STEP_INFO + _value((1, "a")) + b"R.")
    assert (made.args, made.state, made.elements, made.fields(), repr(made)) == (
        (1, "a"), None, (), {}, "<browsergym.experiments.loop.StepInfo>")
    # APPEND one item, then APPENDS two: a list-like instance's items, in order.
    listed = loads(b"\x80\x03" + STEP_INFO + b")R" + _value(1) + b"a(" + _value(2) + _value(3) + b"e.")
    assert (listed.args, listed.elements, dict(listed)) == ((), [1, 2, 3], {})


@pytest.mark.parametrize("state, fields", [
    ({"a": 1}, {"a": 1}),
    (({"a": 1}, {"b": 2}), {"a": 1, "b": 2}),  # a dict and the slots
    ((None, {"b": 2}), {"b": 2}),
    (({"a": 1}, {"a": 2}), {"a": 2}),  # the slots last
    (({"a": 1}, {"b": 2}, {"c": 3}), {}),  # three parts: no instance state of Python's
    ("text", {}),
])
def test_an_instances_fields_are_its_state_or_its_dict_and_slots_merged(state, fields):
    made = loads(b"\x80\x03" + STEP_INFO + b")R" + _value(state) + b"b.")
    assert made.state == state and made.fields() == fields


def test_dtypes_give_their_size_and_byte_order_and_refuse_an_unreadable_state():
    little = loads(b"\x80\x03" + _dtype("u2", (3, "<", None, None, None, -1, -1, 0)) + b".")
    assert (little.name, little.order, little.itemsize, little.format) == ("u2", "<", 2, "<u2")
    single = loads(b"\x80\x03" + _dtype("u1", (3, "|", None, None, None, -1, -1, 0)) + b".")
    assert (single.itemsize, single.format) == (1, "=u1")
    assert loads(b"\x80\x03" + _dtype("f8", (3, ">", None, None, None, -1, -1, 0)) + b".").format == ">f8"
    assert loads(b"\x80\x03" + _dtype("c16", (3, "=", None, None, None, -1, -1, 0)) + b".").format == "=c16"
    for state in [(3,), (3, "?", None, None, None), [3, "<", None, None, None]]:
        _refused(b"\x80\x03" + _dtype("i8", state) + b".", "a numpy dtype with an unreadable state")
    _refused(b"\x80\x03" + _global("numpy", "dtype") + _value(("i8x", False, True)) + b"R.",
             "refused: numpy dtype 'i8x' is not a plain numeric type", PickleRefused)
    _refused(b"\x80\x03" + _global("numpy", "dtype") + _value((8, False, True)) + b"R.",
             "refused: numpy dtype 8 is not a plain numeric type", PickleRefused)


def _state(state: tuple) -> bytes:
    """An ndarray given `state` by BUILD (the dtype's opcodes spliced in where the state holds None)."""
    return (b"\x80\x03" + _global("numpy.core.multiarray", "_reconstruct") + _global("numpy", "ndarray")
            + _value((0,)) + _value(b"b") + b"\x87R" + state + b"b.")


def test_arrays_refuse_a_state_they_cannot_read_naming_what_is_wrong():
    i8 = _dtype("i8", _PLAIN_I8)
    _refused(_state(_value((1, (1,)))), "a numpy array with an unreadable state")
    _refused(_state(_value([1, (1,), None, False, b""])), "a numpy array with an unreadable state")
    for shape in [[1], (-1,), (1.0,)]:
        _refused(_state(b"(" + _value(1) + _value(shape) + i8 + _value(False) + _value(b"\x00" * 8) + b"t"),
                 "a numpy array with an unreadable shape")
    _refused(_state(b"(" + _value(1) + _value((2,)) + i8 + _value(False) + _value(b"\x00" * 8) + b"t"),
             "a numpy array of shape (2,) and dtype i8 with 8 bytes")
    # A bytearray is bytes too; a 0 for Fortran order is False.
    array = loads(_state(b"(" + _value(1) + _value((2,)) + _dtype("u1", _PLAIN_I8) + _value(0)
                         + b"\x96" + struct.pack("<Q", 2) + b"\x01\x02" + b"t"))
    assert (array.shape, array.fortran, array.data, array.values()) == ((2,), False, b"\x01\x02", [1, 2])
    _refused(b"\x80\x03" + _global("numpy.core.multiarray", "_reconstruct") + _global("builtins", "set")
             + _value((0,)) + _value(b"b") + b"\x87R.",
             "refused: numpy's _reconstruct of something other than an ndarray", PickleRefused)


def test_array_values_are_read_in_c_order_as_python_numbers():
    def array(name, data, shape, fortran=False):
        return loads(_state(b"(" + _value(1) + _value(shape) + _dtype(name, (3, "<", None, None, None, -1, -1, 0))
                            + _value(fortran) + _value(data) + b"t"))

    assert array("i2", struct.pack("<6h", 0, 1, 2, 3, 4, -5), (2, 3)).values() == [0, 1, 2, 3, 4, -5]
    # The same six numbers in Fortran order: the first index varies fastest in the bytes.
    assert array("i2", struct.pack("<6h", 0, 3, 1, 4, 2, -5), (2, 3), True).values() == [0, 1, 2, 3, 4, -5]
    assert array("u1", b"\x00\x01\xff", (3,), True).values() == [0, 1, 255]
    assert array("f4", struct.pack("<2f", 0.5, -2.0), (2,)).values() == [0.5, -2.0]
    assert array("b1", b"\x00\x01", (2,)).values() == [False, True]
    with pytest.raises(PickleError) as raised:
        array("c8", b"\x00" * 8, (1,)).values()
    assert str(raised.value) == "numpy dtype c8 is not read as numbers"


def test_protocol_5_arrays_and_numpy_scalars_read():
    numpy = pytest.importorskip("numpy")
    plain = numpy.arange(6, dtype="<i2").reshape(2, 3)
    for made in (plain, numpy.asfortranarray(plain)):
        array = loads(pickle.dumps(made, protocol=5))
        assert (array.shape, array.dtype.format, array.values()) == ((2, 3), "<i2", [0, 1, 2, 3, 4, 5])
    assert loads(pickle.dumps(numpy.asfortranarray(plain), protocol=5)).fortran is True
    assert loads(pickle.dumps(numpy.int16(-3), protocol=4)) == -3
    frombuffer = _global("numpy._core.numeric", "_frombuffer")
    i8 = _dtype("i8", _PLAIN_I8)
    listed = loads(b"\x80\x03" + frombuffer + b"(" + _value(b"\x07" + b"\x00" * 7) + i8 + _value([1]) + _value("C")
                   + b"tR.")
    assert (listed.shape, listed.values()) == ((1,), [7])
    for buffer, order in [([7], "C"), (b"\x07" + b"\x00" * 7, "K")]:
        _refused(b"\x80\x03" + frombuffer + b"(" + _value(buffer) + i8 + _value((1,)) + _value(order) + b"tR.",
                 "a numpy array with an unreadable buffer")
    scalar = _global("numpy.core.multiarray", "scalar")
    for dtype, data in [(_value("i8"), _value(b"\x00" * 8)), (i8, _value("x" * 8)), (i8, _value(b"\x00" * 4))]:
        _refused(b"\x80\x03" + scalar + b"(" + dtype + data + b"tR.", "a numpy scalar with an unreadable value")


def test_paths_dates_and_datetimes_read_as_strings():
    import datetime
    import pathlib

    assert loads(pickle.dumps(pathlib.PurePosixPath("/tmp/x"), protocol=4)) == "/tmp/x"
    assert loads(pickle.dumps(pathlib.PosixPath("a/b"), protocol=4)) == "a/b"
    _refused(b"\x80\x03" + _global("pathlib", "PosixPath") + _value(("a", 1)) + b"R.",
             "a path of something other than strings")
    assert loads(pickle.dumps(datetime.date(2025, 1, 22), protocol=4)) == "2025-01-22"
    assert loads(pickle.dumps(datetime.datetime(2025, 1, 22, 11, 3, 29, 117522), protocol=4)) \
        == "2025-01-22T11:03:29.117522"
    date, when = _global("datetime", "date"), _global("datetime", "datetime")
    for args in [(b"\x07\xe9\x01",), (b"\x07\xe9\x01\x16", None), ("\x07\xe9\x01\x16",)]:
        _refused(b"\x80\x03" + date + _value(args) + b"R.", "a date with an unreadable value")
    stamp = datetime.datetime(2025, 1, 22).__reduce__()[1][0]  # the ten bytes datetime pickles itself as
    assert loads(b"\x80\x03" + when + _value((stamp, None)) + b"R.") == "2025-01-22T00:00:00"
    for args in [(), (stamp, "UTC"), (stamp[:9],), (stamp.decode("latin-1"),), (stamp, None, None)]:
        _refused(b"\x80\x03" + when + _value(args) + b"R.",
                 "refused: a datetime with a time zone or an unreadable value", PickleRefused)


def test_refusals_name_the_global_and_the_persistent_object():
    _refused(b"\x80\x03" + _global("os", "system") + b".",
             "refused: the pickle calls os.system, which is not a BrowserGym / AgentLab class", PickleRefused)
    _refused(b"\x80\x04\x8c\x01x\x94Q.", "refused: the pickle refers to a persistent object", PickleRefused)


def test_the_memo_walk_names_what_is_wrong_and_where():
    assert loads(b"\x80\x04K\x01p4\n.") == 1  # PUT 4: an index within the pickle's 8 bytes
    assert loads(b"\x80\x04K\x01r" + struct.pack("<I", 10) + b".") == 1  # LONG_BINPUT 10, the pickle's size
    _refused(b"\x80\x04K\x01r" + struct.pack("<I", 11) + b".", "memo index 11 out of bounds for a pickle of 10 bytes")
    _refused(b"\x80\x04K\x01p1234567\n.", "memo index 1234567 out of bounds for a pickle of 14 bytes")
    # An index the walk cannot read is left to the unpickler, which refuses it.
    _refused(b"\x80\x04K\x01pxyz\n.",
             "not a readable pickle: ValueError: invalid literal for int() with base 10: 'xyz\\n'")
    _refused(b"\x80\x04\xffK\x01.", "not a readable pickle: unknown opcode b'\\xff' at byte 2")
    _refused(b"\x80\x04K\x01", "not a readable pickle: it ends before its STOP opcode")
    _refused(b"\x80\x04cos\nsystem", "not a readable pickle: a line without its end")
    _refused(b"\x80\x04cos", "not a readable pickle: a line without its end")
    # GLOBAL's two lines are walked as two: the name line is not read as LONG_BINPUT ("r") of index "zzzz".
    _refused(b"\x80\x04cos\nrzzzz\n.", "refused: the pickle calls os.rzzzz, which is not a BrowserGym / AgentLab class",
             PickleRefused)
    _refused(b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00", "not a readable pickle: it ends before its STOP opcode")


def test_gzip_is_read_up_to_its_limit_exactly():
    content = b"x" * 1000
    assert gunzip(gzip.compress(content), 1000) == content
    with pytest.raises(PickleError) as raised:
        gunzip(gzip.compress(content), 999)
    assert str(raised.value) == "more than 999 bytes once decompressed"
    # More than one chunk of a megabyte: every chunk counts.
    large = bytes(range(256)) * 8192
    assert gunzip(gzip.compress(large), len(large)) == large
    with pytest.raises(PickleError, match=r"\Amore than 2,097,151 bytes once decompressed\Z"):
        gunzip(gzip.compress(large), len(large) - 1)
    with pytest.raises(PickleError, match=r"\Anot a readable gzip file: "):
        gunzip(b"\x1f\x8bnot gzip", 100)
    # A gzip file is told by its first two bytes whatever its name; a name ending in .gz is gzip.
    assert load_file("exp_args.pkl", gzip.compress(pickle.dumps([1], protocol=4)), 100) == [1]
    with pytest.raises(PickleError, match=r"\Anot a readable gzip file: "):
        load_file("step_0.pkl.gz", pickle.dumps([1], protocol=4), 100)


def _ints(values, size, signed) -> bytes:
    return b"".join(value.to_bytes(size, "little", signed=signed) for value in values)


@pytest.mark.parametrize("name, data, values", [
    ("b1", b"\x00\x01", [False, True]),
    ("i1", b"\xff\x02", [-1, 2]), ("u1", b"\xff\x02", [255, 2]),
    ("i2", _ints([-2, 3], 2, True), [-2, 3]), ("u2", _ints([-2, 3], 2, True), [65534, 3]),
    ("i4", _ints([-3, 4], 4, True), [-3, 4]), ("u4", _ints([-3, 4], 4, True), [2**32 - 3, 4]),
    ("i8", _ints([-4, 5], 8, True), [-4, 5]), ("u8", _ints([-4, 5], 8, True), [2**64 - 4, 5]),
    # IEEE 754 little-endian: 0.5 and -2.0 in half, single and double precision.
    ("f2", b"\x00\x38\x00\xc0", [0.5, -2.0]),
    ("f4", b"\x00\x00\x00\x3f\x00\x00\x00\xc0", [0.5, -2.0]),
    ("f8", b"\x00" * 6 + b"\xe0\x3f" + b"\x00" * 7 + b"\xc0", [0.5, -2.0]),
])
def test_every_numeric_dtype_reads_its_numbers_signed_or_not(name, data, values):
    array = loads(_state(b"(" + _value(1) + _value((2,)) + _dtype(name, (3, "<", None, None, None, -1, -1, 0))
                         + _value(False) + _value(data) + b"t"))
    assert array.values() == values


def test_numpy_calls_missing_an_argument_take_the_safe_default():
    i4 = _dtype("i4", (3, "<", None, None, None, -1, -1, 0))
    _refused(b"\x80\x03" + _global("numpy.core.multiarray", "scalar") + b"(" + i4 + b"tR.",
             "a numpy scalar with an unreadable value")
    frombuffer = _global("numpy._core.numeric", "_frombuffer")
    array = loads(b"\x80\x03" + frombuffer + b"(" + _value(b"\x07\x00\x00\x00") + i4 + _value((1,)) + b"tR.")
    assert (array.values(), array.fortran) == ([7], False)  # C order when none is named
    _refused(b"\x80\x03" + frombuffer + b"(" + _value(b"\x07\x00\x00\x00") + i4 + _value(1) + _value("C") + b"tR.",
             "a numpy array with an unreadable shape")


def test_copyreg_refusal_is_named_in_full():
    _refused(_copyreg_instance(STEP_INFO, _global("builtins", "set")),
             "refused: copyreg._reconstructor of a class outside the allow-list", PickleRefused)


def test_fixed_size_arguments_may_hold_newline_bytes():
    run, _ = safe_pickle._opcode_table()
    assert run.fullmatch(b"K\nK\n") and run.fullmatch(b"\x8c\x01\n\x8c\x02\n\n")
    assert loads(b"\x80\x04K\n\x8c\x01\n\x86.") == (10, "\n")


def test_gzip_means_gzip_and_a_bomb_is_never_held_whole():
    import tracemalloc
    import zlib

    with pytest.raises(PickleError, match=r"\Anot a readable gzip file: "):
        gunzip(zlib.compress(b"x"), 100)  # zlib's own header is not gzip's
    bomb = gzip.compress(b"\x00" * (32 << 20))
    tracemalloc.start()
    try:
        with pytest.raises(PickleError, match=r"\Amore than 1,048,576 bytes once decompressed\Z"):
            gunzip(bomb, 1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20  # a chunk at a time: a few megabytes, never the 32 the bomb holds


def test_what_the_last_flush_gives_counts_against_the_limit_too():
    # Cut before its trailer, 100 bytes past the limit are still inside zlib when the input runs out.
    cut = gzip.compress(b"\x00" * ((1 << 20) + 100))[:-8]
    with pytest.raises(PickleError) as raised:
        gunzip(cut, 1 << 20)
    assert str(raised.value) == "more than 1,048,576 bytes once decompressed"


def test_array_refusals_are_named_in_full_and_an_empty_array_reads():
    _refused(_array(_value("i8"), (7).to_bytes(8, "little")),
             "refused: a numpy array of a dtype other than plain numbers", PickleRefused)
    _refused(_array(_dtype("i8", _PLAIN_I8), [1, 2, 3, 4, 5, 6, 7, 8]), "refused: a numpy array of Python objects",
             PickleRefused)
    empty = loads(_state(b"(" + _value(1) + _value((0,)) + _dtype("i8", _PLAIN_I8) + _value(False) + _value(b"")
                         + b"t"))
    assert (empty.shape, empty.values()) == ((0,), [])


def test_a_malformed_pickles_reason_is_kept_to_200_characters():
    reason = "invalid literal for int() with base 10: '" + "x" * 159  # 41 + 159 characters
    _refused(b"\x80\x04L" + b"x" * 300 + b"L\n.", f"not a readable pickle: ValueError: {reason}")


def test_dtypes_made_without_a_state_or_a_name_and_a_two_part_state():
    _refused(b"\x80\x03" + _global("numpy", "dtype") + b")R.", "refused: numpy dtype '' is not a plain numeric type",
             PickleRefused)
    bare = loads(b"\x80\x03" + _global("numpy", "dtype") + _value(("i8",)) + b"R.")
    assert (bare.order, bare.format) == ("<", "<i8")
    assert loads(b"\x80\x03" + _dtype("i8", (3, ">")) + b".").format == ">i8"


def test_the_memo_walk_reads_empty_lines_long_lengths_and_indexes_of_put_alone():
    assert loads(b"\x80\x02V\n.") == ""  # UNICODE of an empty line: its newline right after the opcode
    assert loads(b"\x80\x02I123456789012\n.") == 123456789012  # an INT's digits are no memo index
    # BINUNICODE: all four length bytes (70000 needs three); X, its own opcode, fills the string.
    assert loads(pickle.dumps("X" * 70000, protocol=3)) == "X" * 70000


@pytest.mark.parametrize("order", ["|", "="])
def test_array_values_of_a_dtype_without_or_with_native_order_are_read_little_endian(order):
    array = loads(_state(b"(" + _value(1) + _value((1,)) + _dtype("i2", (3, order, None, None, None, -1, -1, 0))
                         + _value(False) + _value(b"\x01\x02") + b"t"))
    assert array.values() == [0x0201]
