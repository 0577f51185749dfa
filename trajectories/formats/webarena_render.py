"""WebArena `render_<task_id>.html` files, read by their fixed layout rather than as a DOM.

The harness writes page text, model output and Python reprs without HTML escaping and closes
each observation with `<div>` instead of `</div>`, so an HTML parser nests every later step in
the first one. Instead the file is cut into step blocks at `<h2>New Page</h2>`, and each block's
parts are located from its end backwards: the observation, which is arbitrary page text and so
the likeliest to contain markup, comes first, and the reprs after it quote their strings.
"""

import ast
import re

from .agent_steps import action_parts, agent_outcome, forced_stop
from .actions import extract_planned_action
from .canonical import Step, TaskRef, Trajectory, TrajectoryFormatError
from .text import decode_utf8

FORMAT = "webarena_render"

_STEP_MARK = "<h2>New Page</h2>"
_HEADER_LINE = re.compile(r"([A-Za-z_]\w*): ?(.*)\Z", re.S)
# Header values the harness writes as Python reprs; the others (intent, urls) are plain text.
_REPR_KEYS = frozenset(
    {"sites", "task_id", "require_login", "require_reset", "instantiation_dict", "eval", "geolocation",
     "intent_template_id"}
)
# What a trajectory takes from the header: its task's id (a repr) and intent (text). Reading the other
# reprs, the evaluation config above all, took a quarter of the time of parsing a whole file.
_TRAJECTORY_REPRS = frozenset({"task_id"})
_TASK_ID_IN_NAME = re.compile(r"render_(\w+)\.html?\Z", re.I)
_IMAGE_SOURCE = b"<img src="
_LONGEST_DATA_HEADER = 100  # `data:image/png;base64` and its like


def parse_header(block: str, reprs: frozenset[str] = _REPR_KEYS) -> dict:
    """The task config at the top of the file: `key: value` lines, the values of `reprs` read as
    Python reprs, the others left as text."""
    config: dict = {}
    key = None
    for line in block.split("\n"):
        match = _HEADER_LINE.match(line)
        if match:
            key = match.group(1)
            config[key] = match.group(2)
        elif key is not None:
            config[key] += "\n" + line
    for key in reprs & config.keys():
        try:
            config[key] = ast.literal_eval(config[key].strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
    return {key: value.strip() if isinstance(value, str) else value for key, value in config.items()}


class _Block:
    """One `<h2>New Page</h2>` section of the file, as offsets into the whole text."""

    def __init__(self, text: str, start: int, end: int, number: int, lifted: "_Lifted"):
        self.text, self.start, self.end, self.number, self.lifted = text, start, end, number, lifted

    def line(self, position: int) -> int:
        return self.text.count("\n", 0, position) + 1

    def error(self, message: str, position: int | None = None) -> TrajectoryFormatError:
        where = self.start if position is None else position
        return TrajectoryFormatError(message, where=f"step block {self.number}", line=self.line(where))

    def rfind_div(self, css_class: str, end: int) -> int:
        found = self.text.rfind(f"<div class='{css_class}'", self.start, end)
        return found if found >= 0 else self.text.rfind(f'<div class="{css_class}"', self.start, end)

    def pre_content(self, div: int, end: int) -> str:
        """The text of the `<pre>` opened in the div at `div`, up to the last `</pre>` before `end`."""
        opening = self.text.find("<pre>", div, end)
        if opening < 0:
            return ""
        closing = self.text.rfind("</pre>", opening, end)
        return self.text[opening + 5 : closing if closing >= 0 else end]

    def parse(self) -> Step:
        text = self.text
        executed_div = self.rfind_div("parsed_action", self.end)
        if executed_div < 0:
            raise self.error("no parsed_action: the step is incomplete (file cut off while being written?)")
        action = self.pre_content(executed_div, self.end).strip()

        object_div = self.rfind_div("action_object", executed_div)
        reasoning_div = self.rfind_div("raw_parsed_prediction", object_div if object_div >= 0 else executed_div)
        reasoning = ""
        if reasoning_div >= 0:
            reasoning = self.pre_content(reasoning_div, object_div if object_div >= 0 else executed_div)
        predict_div = self.rfind_div("predict_action", reasoning_div if reasoning_div >= 0 else executed_div)
        if predict_div < 0:
            raise self.error("no predict_action section", executed_div)

        previous_div = self.rfind_div("prev_action", predict_div)
        prev_action = ""
        if previous_div >= 0:
            opened = text.find(">", previous_div, predict_div) + 1
            closed = text.rfind("</div>", opened, predict_div)
            prev_action = text[opened : closed if closed >= 0 else predict_div].strip()
            if prev_action == "None":
                prev_action = ""
        observation_end = previous_div if previous_div >= 0 else predict_div

        observation, screenshot = "", None
        observation_div = text.find("<div class='state_obv'>", self.start, observation_end)
        if observation_div >= 0:
            # The tag just before the previous action is the screenshot's <img>, if there is one
            # (base64 holds no '<'); the observation's </pre> is then found without crossing it.
            last_tag = text.rfind("<", observation_div, observation_end)
            if text.startswith("<img src=", last_tag):
                screenshot = _screenshot(text, last_tag, observation_end, self.lifted)
                observation_end = last_tag
            opening = text.find("<pre>", observation_div, observation_end)
            closing = text.rfind("</pre>", opening, observation_end)
            if opening < 0 or closing < 0:
                raise self.error("the observation's <pre> is not closed", observation_div)
            observation = text[opening + 5 : closing]

        url = ""
        heading = text.find("<h3 class='url'>", self.start, observation_div if observation_div >= 0 else predict_div)
        if heading >= 0:
            label = text.find("URL: ", heading, observation_end)
            closing = text.find("</a>", label, observation_end)
            if label >= 0 and closing >= 0:
                url = text[label + 5 : closing].strip()

        return Step(
            index=self.number,
            action=action,
            url=url,
            observation=observation,
            reasoning=reasoning,
            planned_action=extract_planned_action(reasoning),
            prev_action=prev_action,
            screenshot=screenshot,
        )


class _Lifted:
    """The screenshots' `data:` URIs that `decode_render` kept out of the text, and which of them
    the parse put back as a step's screenshot."""

    def __init__(self, uris: dict[int, str]):
        self.uris, self.taken = uris, set()

    def take(self, position: int) -> str:
        uri = self.uris.get(position, "")
        if uri:
            self.taken.add(position)
        return uri

    def all_taken(self) -> bool:
        return len(self.taken) == len(self.uris)

    def restored(self, text: str) -> str:
        """The text with every URI back in its place."""
        pieces, start = [], 0
        for position in sorted(self.uris):
            pieces += (text[start:position], self.uris[position])
            start = position
        return "".join(pieces) + text[start:]


def _screenshot(text: str, image: int, end: int, lifted: _Lifted) -> str | None:
    """The `data:` URI of the `<img>` tag at `image`."""
    quote = text[image + 9]
    closing = text.find(quote, image + 10, end) if quote in "'\"" else -1
    if closing < 0:
        return None
    source = (text[image + 10 : closing] + lifted.take(closing)).strip()
    return source if source.startswith("data:") else None


def decode_render(data: bytes) -> tuple[str, dict[int, str], bool]:
    """The file's text without its `<img src='data:...;base64,...'>` sources, whose base64 is most of
    its bytes; each such `data:` URI by the position in that text it was taken from (its closing
    quote's); and whether the file was valid UTF-8. Decoded with the page text, the base64 would be
    widened to the page's widest character, then narrowed again to be decoded. Only URIs of ASCII on
    one line are taken out, so that the text's line numbers stay those of the file. A URI is taken
    out whole, so that the step it is the screenshot of takes it as it is, without a copy."""
    pieces, uris, valid, length, start = [], {}, True, 0, 0
    view = memoryview(data)  # slices of it are decoded without being copied first
    image = data.find(_IMAGE_SOURCE)
    while image >= 0:
        source = image + len(_IMAGE_SOURCE)
        found = _data_uri(data, view, source)
        if found is None:
            image = data.find(_IMAGE_SOURCE, source)
            continue
        begin, closing, uri = found
        piece, piece_valid = decode_utf8(view[start:begin], at_start=start == 0)
        pieces.append(piece)
        valid &= piece_valid
        length += len(piece)
        uris[length] = uri
        start = closing
        image = data.find(_IMAGE_SOURCE, closing)
    piece, piece_valid = decode_utf8(view[start:], at_start=start == 0)
    pieces.append(piece)
    return "".join(pieces), uris, valid and piece_valid


def _data_uri(data: bytes, view: memoryview, source: int) -> tuple[int, int, str] | None:
    """Where the quoted `data:...;base64,` source at `source` begins and ends (inside its quotes), and
    the URI itself, if it is ASCII on one line."""
    quote = data[source : source + 1]
    if quote not in (b"'", b'"') or not data.startswith(b"data:", source + 1):
        return None
    comma = data.find(b",", source + 1, source + _LONGEST_DATA_HEADER)
    if comma < 0 or not data[source + 1 : comma].endswith(b";base64") or data.find(quote, source + 1, comma) >= 0:
        return None
    closing = data.find(quote, comma + 1)
    if closing < 0:
        return None
    try:
        uri = str(view[source + 1 : closing], "ascii")
    except UnicodeDecodeError:
        return None
    if "\n" in uri or "\r" in uri:
        return None
    return source + 1, closing, uri


def _header(text: str, first_step: int) -> dict:
    opening = text.find("<pre>", 0, first_step)
    if opening < 0:
        return {}
    closing = text.find("</pre>", opening, first_step)
    return parse_header(text[opening + 5 : closing if closing >= 0 else first_step], _TRAJECTORY_REPRS)


def _task_id(config: dict, name: str) -> str:
    task_id = config.get("task_id")
    if isinstance(task_id, (int, str)) and str(task_id).strip():
        return str(task_id).strip()
    match = _TASK_ID_IN_NAME.search(name)
    if match:
        return match.group(1)
    raise TrajectoryFormatError("no task_id in the config header and no render_<task_id>.html file name",
                                where="header")


def _positions(text: str, mark: str) -> list[int]:
    """Where `mark` occurs."""
    positions, found = [], text.find(mark)
    while found >= 0:
        positions.append(found)
        found = text.find(mark, found + len(mark))
    return positions


def parse_render(text: str, name: str = "", screenshots: dict[int, str] | None = None) -> Trajectory:
    """One render file as a `trajectory/v1` Trajectory (screenshots stay `data:` URIs). `text` and
    `screenshots` may be what `decode_render` gives: a URI that turns out not to be a step's
    screenshot (an image in the page text) is put back and the whole text parsed again."""
    lifted = _Lifted(screenshots or {})
    try:
        trajectory = _parse(text, name, lifted)
    except TrajectoryFormatError:
        if not lifted.uris:
            raise
        return _parse(lifted.restored(text), name, _Lifted({}))
    if lifted.all_taken():
        return trajectory
    return _parse(lifted.restored(text), name, _Lifted({}))


def _parse(text: str, name: str, lifted: _Lifted) -> Trajectory:
    marks = _positions(text, _STEP_MARK)
    body_end = text.rfind("</body>")
    if body_end < (marks[-1] if marks else 0):
        body_end = len(text)
    config = _header(text, marks[0] if marks else body_end)
    if not marks and not config.keys() & {"task_id", "intent"}:
        raise TrajectoryFormatError("not a WebArena render file: no config header and no <h2>New Page</h2> steps")
    bounds = list(zip(marks, marks[1:] + [body_end]))

    steps: list[Step] = []
    stopped_by_harness = None
    for number, (start, end) in enumerate(bounds, start=1):
        step = _Block(text, start, end, number, lifted).parse()
        stopped_by_harness = forced_stop(step.action)
        if stopped_by_harness is not None:
            break
        step.action_parts = action_parts(step.action, step.observation)
        steps.append(step)

    outcome, final_answer = agent_outcome(steps, stopped_by_harness)
    intent = config.get("intent", "")
    return Trajectory(
        task=TaskRef(task_id=_task_id(config, name), intent=intent if isinstance(intent, str) else ""),
        steps=steps,
        outcome=outcome,
        final_answer=final_answer,
    )
