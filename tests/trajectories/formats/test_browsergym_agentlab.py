"""BrowserGym / AgentLab episode folders, read from the real study excerpt in shared."""

import base64
import gzip
import io
import json
import pickle

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from PIL import Image

from trajectories.formats.browsergym_agentlab import actions, parse_episode, parse_study_results, split_task_name
from trajectories.formats.canonical import ActionParts
from trajectories.formats.canonical import TrajectoryFormatError
from trajectories.formats.readers import prepared_records, read_records
from trajectories.formats.sources import Catalogue, Limits

LIMITS = Limits(max_files=1000, max_total_bytes=1 << 30, max_file_bytes=1 << 26, max_compression_ratio=1000)
DIALOG = "2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-dialog_28"
CHECKBOXES = "2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-checkboxes_7"


@pytest.fixture
def study(shared_data):
    return shared_data / "agent-outputs" / "browsergym-agentlab"


def _read(paths) -> dict:
    with Catalogue(paths, LIMITS) as catalogue:
        return {source.name.split("/")[-2]: record for source in catalogue if source.kind == "trajectories"
                for record in prepared_records(source, LIMITS.max_file_bytes)}


def test_both_episodes_of_the_study_read_with_their_pickles(study):
    records = _read([study])
    assert set(records) == {DIALOG, CHECKBOXES}
    assert {record.format for record in records.values()} == {"browsergym_agentlab"}
    assert [record.error for record in records.values()] == [None, None]

    dialog = records[DIALOG].trajectory
    assert (dialog.task.benchmark, dialog.task.task_id, dialog.task.intent) == (
        "miniwob", "click-dialog_28", 'Close the dialog box by clicking the "x".')
    assert (dialog.run.agent, dialog.run.model) == ("GenericAgent-gpt-4o-mini", "gpt-4o-mini")
    [step] = dialog.steps
    assert (step.index, step.action, step.prev_action) == (1, "click('20')", "")
    assert (step.action_parts.type, step.action_parts.element_id) == ("click", "20")
    assert step.action_parts.element_label == "button 'Close', clickable, visible, focused"
    assert step.url == "file:///home/t/miniwob-plusplus/miniwob/html/miniwob/click-dialog.html"
    assert step.observation.startswith("RootWebArea 'Click Dialog Task', focused\n\t[17] dialog ''")
    assert step.reasoning.startswith('The dialog box is currently open, and the "Close" button is focused.')
    assert (step.tokens_in, step.tokens_out, step.cost) == (1589, 63, 0.00027614999999999996)
    assert step.duration == pytest.approx(5.891982078552246 + 3.4504799842834473)
    assert step.screenshot is None  # the excerpt keeps no screenshot_step_N.png
    # summary_info.json: n_steps 1, cum_reward 1.0, terminated, not truncated, no error.
    assert (dialog.outcome.status, dialog.outcome.success, dialog.outcome.source) == (
        "no_stop", True, "BrowserGym reward")
    assert dialog.outcome.message == "terminated by the environment" and dialog.final_answer is None
    assert (dialog.tokens_in, dialog.tokens_out, dialog.cost) == (1589, 63, 0.00027614999999999996)

    checkboxes = records[CHECKBOXES].trajectory
    assert (checkboxes.task.task_id, checkboxes.task.intent) == ("click-checkboxes_7", "Select Neb and click Submit.")
    assert [(s.index, s.action, s.action_parts.element_label) for s in checkboxes.steps] == [
        (1, "click('27')", "checkbox 'Neb', clickable, visible, checked='false'"),
        (2, "click('33')", "button 'Submit', clickable, visible"),
    ]
    assert checkboxes.steps[1].prev_action == "click('27')"
    assert [(s.tokens_in, s.tokens_out) for s in checkboxes.steps] == [(1385, 65), (1404, 63)]
    # The per-step figures add up to summary_info.json's totals.
    assert (checkboxes.tokens_in, checkboxes.tokens_out, checkboxes.cost) == (2789, 128, 0.00049515)
    assert checkboxes.duration == pytest.approx(6.860883951187134 + 3.769465684890747)
    assert sum(s.duration for s in checkboxes.steps) == pytest.approx(checkboxes.duration)
    assert (checkboxes.outcome.status, checkboxes.outcome.success) == ("no_stop", True)


@pytest.mark.parametrize("action, expected", [
    ("click('30')", ("click", "30", "", None)),
    ("click('a51', button='right')", ("click", "a51", "", None)),
    ("dblclick('7')", ("click", "7", "", None)),
    ("hover('12')", ("hover", "12", "", None)),
    ("fill('237', 'example value')", ("type", "237", "example value", False)),
    ("clear('4')", ("type", "4", "", False)),
    ("select_option('48', ['red', 'green'])", ("select", "48", "red, green", None)),
    ("select_option('48', 'blue')", ("select", "48", "blue", None)),
    ("press('88', 'Backspace')", ("press", "88", "Backspace", None)),
    ("keyboard_press('Enter')", ("press", "", "Enter", None)),
    ("keyboard_type('hello')", ("type", "", "hello", False)),
    ("scroll(0, 200)", ("scroll", "", "down", None)),
    ("mouse_click(600, 475)", ("click", "", "", None)),
    ("goto('http://www.wikipedia.org')", ("goto", "", "http://www.wikipedia.org", None)),
    ("go_back()", ("go_back", "", "", None)),
    ("new_tab()", ("new_tab", "", "", None)),
    ("tab_close()", ("close_tab", "", "", None)),
    ("tab_focus(2)", ("tab_focus", "", "2", None)),
    ("send_msg_to_user('Based on the results, the answer is 42.')",
     ("stop", "", "Based on the results, the answer is 42.", None)),
    ("report_infeasible('I cannot log in.')", ("stop", "", "I cannot log in.", None)),
    ("noop(1000)", ("noop", "", "1000", None)),
    ("focus('b512')", ("focus", "b512", "", None)),
    ("__import__('os').system('ls')", ("none", "", "", None)),
    ("click(", ("none", "", "", None)),
])
def test_actions_are_read_with_ast_into_the_platforms_kinds(action, expected):
    [(text, parts)] = actions(action, "")
    assert text == action
    assert (parts.type, parts.element_id, parts.value, parts.press_enter) == expected


@pytest.mark.parametrize("action, expected", [
    ("mouse_click(600, 475)", ActionParts(type="click", x=600.0, y=475.0)),
    ("mouse_dblclick(12.5, 40)", ActionParts(type="click", x=12.5, y=40.0)),
    ("mouse_move(3, 4)", ActionParts(type="hover", x=3.0, y=4.0)),
    ("scroll(0, 200)", ActionParts(type="scroll", value="down", delta_x=0.0, delta_y=200.0)),
    ("scroll(-50, 0)", ActionParts(type="scroll", value="left", delta_x=-50.0, delta_y=0.0)),
    # From (100, 300) to (40, 320): moved 40 - 100 = -60 right and 320 - 300 = 20 down.
    ("mouse_drag_and_drop(100, 300, 40, 320)", ActionParts(type="drag", x=100.0, y=300.0, delta_x=-60.0,
                                                           delta_y=20.0)),
    ("drag_and_drop('12', '40')", ActionParts(type="drag", element_id="12", value="40")),
])
def test_points_scrolls_and_drags_keep_their_coordinates(action, expected):
    assert actions(action, "") == [(action, expected)]


def test_the_element_label_comes_from_the_steps_accessibility_tree():
    tree = "RootWebArea 'Shop'\n\t[a12] link 'My Account'\n\t[13] textbox 'Search', focused"
    [(_, click)] = actions("click('a12')", tree)
    [(_, fill)] = actions("fill('13', 'shoes')", tree)
    assert click.element_label == "link 'My Account'"
    assert fill.element_label == "textbox 'Search', focused"


def test_every_call_of_a_multi_action_step_is_kept_with_its_own_text():
    tree = "[3] button 'Go'\n[4] textbox 'Name'"
    assert actions("fill('4', 'x')\nclick('3')", tree) == [
        ("fill('4', 'x')", ActionParts(type="type", element_id="4", element_label="textbox 'Name'", value="x",
                                       press_enter=False)),
        ("click('3')", ActionParts(type="click", element_id="3", element_label="button 'Go'")),
    ]


@pytest.mark.parametrize("name, seed, expected", [
    ("miniwob.click-dialog", 28, ("miniwob", "click-dialog_28")),
    ("webarena.310", 42, ("webarena", "310")),
    ("visualwebarena.7", None, ("visualwebarena", "7")),
    ("workarena.servicenow.order-ipad-pro", 3, ("workarena", "servicenow.order-ipad-pro_3")),
    ("assistantbench.validation.3", 0, ("assistantbench", "validation.3")),
])
def test_the_task_name_prefix_names_the_benchmark(name, seed, expected):
    ref = split_task_name(name, seed)
    assert (ref.benchmark, ref.task_id) == expected


def test_a_task_name_without_benchmark_is_an_error_naming_the_field():
    with pytest.raises(TrajectoryFormatError, match="does not start with its benchmark") as error:
        split_task_name("click-dialog", 1)
    assert error.value.where == "exp_args.env_args.task_name"


def _episode(files: dict[str, object]):
    """A `read_sibling` over pickled plain records, as AgentLab's files would hold them."""
    data = {name: gzip.compress(pickle.dumps(value)) if name.endswith(".gz") else pickle.dumps(value)
            for name, value in files.items()}

    def read_sibling(name):
        if name not in data:
            raise FileNotFoundError(name)
        return data[name]
    return read_sibling


def _step(position, action, **extra):
    return {"step": position, "action": action, "obs": {"goal": "What is the top product?", "url": "http://shop/",
                                                         "axtree_txt": "[5] button 'Go'"},
            "agent_info": {"think": f"thinking {position}"}, **extra}


def _summary(**fields):
    return {"n_steps": 2, "cum_reward": 0.0, "err_msg": None, "terminated": True, "truncated": False, **fields}


def test_send_msg_to_user_is_the_final_answer_of_a_webarena_task():
    read = _episode({"exp_args.pkl": {"env_args": {"task_name": "webarena.310", "task_seed": 5}},
                     "step_0.pkl.gz": _step(0, "click('5')"),
                     "step_1.pkl.gz": _step(1, "send_msg_to_user('Sprite, with 12 sold')"),
                     "step_2.pkl.gz": _step(2, None)})
    trajectory = parse_episode(_summary(cum_reward=1.0), read)
    assert (trajectory.task.benchmark, trajectory.task.task_id) == ("webarena", "310")
    assert [s.action for s in trajectory.steps] == ["click('5')", "send_msg_to_user('Sprite, with 12 sold')"]
    assert trajectory.final_answer == "Sprite, with 12 sold"
    assert (trajectory.outcome.status, trajectory.outcome.success) == ("answered", True)


def test_an_error_truncation_or_infeasibility_sets_the_outcome():
    files = {"exp_args.pkl": {"env_args": {"task_name": "webarena.4"}}, "step_0.pkl.gz": _step(0, "click('5')")}
    crashed = parse_episode(_summary(n_steps=1, err_msg="TimeoutError: page.goto"), _episode(files))
    assert (crashed.outcome.status, crashed.outcome.message, crashed.outcome.success) == (
        "crashed", "TimeoutError: page.goto", False)
    truncated = parse_episode(_summary(n_steps=1, truncated=True, terminated=False), _episode(files))
    assert (truncated.outcome.status, truncated.outcome.reason) == ("early_stop", "max_steps")
    files["step_0.pkl.gz"] = _step(0, "report_infeasible('The page does not exist')")
    infeasible = parse_episode(_summary(n_steps=1), _episode(files))
    assert (infeasible.outcome.status, infeasible.final_answer) == ("na", "The page does not exist")


def test_a_missing_exp_args_or_a_refused_pickle_fails_the_episode_naming_the_file():
    with pytest.raises(TrajectoryFormatError, match="exp_args.pkl not found beside summary_info.json"):
        parse_episode(_summary(), _episode({}))
    hostile = {"exp_args.pkl": {"env_args": {"task_name": "webarena.4"}}, "step_0.pkl.gz": b""}

    def read_sibling(name):
        if name == "step_0.pkl.gz":
            return gzip.compress(b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x02ls\x85R.")
        return _episode(hostile)(name)
    with pytest.raises(TrajectoryFormatError, match=r"step_0.pkl.gz: refused: the pickle calls os.system"):
        parse_episode(_summary(), read_sibling)


def test_a_summary_info_json_read_without_its_folder_says_so(study):
    path = study / DIALOG / "summary_info.json"
    with path.open("rb") as stream:
        [record] = read_records("summary_info.json", stream, 1 << 20)
    assert record.error.message.startswith("exp_args.pkl not found beside summary_info.json: summary_info.json is "
                                           "read with the other files of its episode folder")


def test_a_summary_info_json_elsewhere_is_not_taken_for_an_episode(tmp_path):
    (tmp_path / "summary_info.json").write_text(json.dumps({"unrelated": 1}))
    records = list(prepared_records(Catalogue([tmp_path / "summary_info.json"], LIMITS).sources[0], 1 << 20))
    assert records[0].format == "trajectory_v1_json" and records[0].error is not None


def test_the_study_result_df_gives_each_episodes_task_folder_and_reward(study):
    summary = parse_study_results((study / "result_df_trial_1_of_3.csv").read_bytes(), "result_df_trial_1_of_3.csv")
    assert [(r.task.benchmark, r.task.task_id, r.folder, r.success, r.line) for r in summary.entries] == [
        ("miniwob", "click-checkboxes_7", CHECKBOXES, True, 2),
        ("miniwob", "click-checkboxes_20",
         "2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-checkboxes_20", True, 3),
        ("miniwob", "click-dialog_28", DIALOG, True, 4),
        ("miniwob", "click-dialog_14", "2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-dialog_14",
         True, 5),
    ]


@pytest.mark.parametrize("text, message, line", [
    ("env.task_name,exp_dir\nminiwob.a,/x\n", "no column 'env.task_seed'", 1),
    ("env.task_name,env.task_seed,exp_dir,cum_reward\nminiwob.a,1,/x,lots\n", "expected numbers", 2),
    ("env.task_name,env.task_seed,exp_dir,cum_reward\nminiwob.a,1,/x,0\nnobenchmark,1,/y,1\n",
     "does not start with its benchmark", 3),
    ("env.task_name,env.task_seed,exp_dir,cum_reward\nminiwob.a,1," + "x" * 200_000 + ",0\n",
     "exp_dir: a cell longer than 131072 characters", 2),
])
def test_a_bad_result_df_is_an_error_naming_the_line(text, message, line):
    with pytest.raises(TrajectoryFormatError, match=message) as error:
        parse_study_results(text.encode(), "result_df.csv")
    assert error.value.line == line


def test_a_screenshot_array_in_the_observation_becomes_a_png():
    numpy = pytest.importorskip("numpy")
    pixels = numpy.arange(2 * 3 * 3, dtype=numpy.uint8).reshape(2, 3, 3)
    step = _step(0, "click('5')")
    step["obs"]["screenshot"] = pixels
    read = _episode({"exp_args.pkl": {"env_args": {"task_name": "webarena.4"}}, "step_0.pkl.gz": step})
    [parsed] = parse_episode(_summary(n_steps=1), read).steps
    assert parsed.screenshot.startswith("data:image/png;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(parsed.screenshot.partition(",")[2])))
    assert (image.size, image.mode, image.getpixel((2, 1))) == ((3, 2), "RGB", (15, 16, 17))


def test_without_a_goal_in_the_observation_the_goal_object_gives_the_intent():
    step = _step(0, "click('5')")
    del step["obs"]["goal"]
    read = _episode({"exp_args.pkl": {"env_args": {"task_name": "webarena.4"}}, "step_0.pkl.gz": step,
                     "goal_object.pkl.gz": [{"type": "text", "text": "Find the cheapest"},
                                            {"type": "image_url", "image_url": "data:..."},
                                            {"type": "text", "text": "red shoes"}]})
    assert parse_episode(_summary(n_steps=1), read).task.intent == "Find the cheapest\nred shoes"


def _dialog_files() -> dict[str, bytes]:
    from tests.conftest import SHARED_DATA

    folder = SHARED_DATA / "agent-outputs" / "browsergym-agentlab" / DIALOG
    return {path.name: path.read_bytes() for path in folder.iterdir()}


_DIALOG_FILES = _dialog_files()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["exp_args.pkl", "step_0.pkl.gz", "step_1.pkl.gz"]),
       st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=6))
def test_fuzz_a_mutated_episode_fails_with_a_format_error_or_reads(name, changes):
    """A damaged pickle of the real episode either still reads or fails its file with a reason."""
    files = dict(_DIALOG_FILES)
    data = bytearray(gzip.decompress(files[name]) if name.endswith(".gz") else files[name])
    for position, value in changes:
        data[position % len(data)] = value
    files[name] = gzip.compress(bytes(data)) if name.endswith(".gz") else bytes(data)

    def read_sibling(sibling):
        if sibling not in files:
            raise FileNotFoundError(sibling)
        return files[sibling]
    try:
        parse_episode(json.loads(files["summary_info.json"]), read_sibling)
    except TrajectoryFormatError:
        pass
