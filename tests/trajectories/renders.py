"""Build WebArena render files in the harness's exact layout, for cases the real samples lack."""

import base64
import io
from dataclasses import dataclass

from PIL import Image

_HEAD = """
<!DOCTYPE html>
<head>
    <style>
        pre {
            white-space: pre-wrap;
            word-wrap: break-word;
        }
    </style>
</head>
<html>
    <body>
     <pre>sites: ['shopping_admin']
task_id: %(task_id)s
require_login: True
start_url: http://localhost:7780/admin
geolocation: None
intent: %(intent)s
require_reset: False
eval: {'eval_types': ['string_match'], 'reference_answers': {'exact_match': 'N/A'}, 'reference_url': ''}
intent_template_id: 279
</pre>
"""
_STEP = (
    "\n    <h2>New Page</h2>\n"
    "<h3 class='url'><a href=%(url)s>URL: %(url)s</a></h3>\n"
    "<div class='state_obv'><pre>%(observation)s</pre><div>\n"
    "%(image)s<div class='prev_action' style='background-color:pink'>%(prev_action)s</div>\n"
    "<div class='predict_action'>"
    "<div class='raw_parsed_prediction' style='background-color:grey'><pre>%(reasoning)s</pre></div>"
    "<div class='action_object' style='background-color:grey'><pre>"
    "{'action_type': <ActionTypes.NONE: 0>, 'raw_prediction': %(reasoning_repr)s}</pre></div>"
    "<div class='parsed_action' style='background-color:yellow'><pre>%(action)s</pre></div></div>\n"
)
_TAIL = """
    </body>
</html>
"""


def png(color=(200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), color).save(buffer, format="PNG")
    return buffer.getvalue()


@dataclass
class RenderStep:
    action: str
    reasoning: str = ""
    observation: str = "Tab 0 (current): Page\n\n[1] RootWebArea 'Page' focused: True"
    url: str = "http://localhost:7780/admin"
    prev_action: str = "None"
    screenshot: bytes | None = None


def render_html(task_id="3", steps=(), intent="What are the top-2 best-selling product in 2022") -> str:
    parts = [_HEAD % {"task_id": task_id, "intent": intent}]
    for step in steps:
        image = ""
        if step.screenshot is not None:
            encoded = base64.b64encode(step.screenshot).decode()
            image = f"<img src='data:image/png;base64,{encoded}' style='width:50vw; height:auto;'/>\n"
        parts.append(
            _STEP
            % {
                "url": step.url,
                "observation": step.observation,
                "image": image,
                "prev_action": step.prev_action,
                "reasoning": step.reasoning,
                "reasoning_repr": repr(step.reasoning),
                "action": step.action,
            }
        )
    parts.append(_TAIL)
    return "".join(parts)
