"""What an agent acting by screen coordinates acted on, asked of a judge that sees screenshots
(Django-free).

Such an agent records a point, not an element (`Click at (600, 475)`). The judge is shown the
part of the step's screenshot around the point, the point marked, and the step's reasoning, and
says which element is there and whether it is the one the reasoning meant (`intended`: the
Element Accuracy of that step; the answer's schema is in `judges.schema`). The element it names
is then the step's element wherever steps
are compared (step matching against gold).

The crop enters the question's inputs by the screenshot's sha256 and the point (the crop is made
from them alone); the image travels with the question as a data URI (`Question.images`).
"""

import base64
import io
from PIL import Image, ImageDraw, UnidentifiedImageError

from .questions import ELEMENT_AT_POINT, Question

# The crop around the point: wide enough to show the control and its label, small enough for any
# vision model's input; clamped to the screenshot, the point kept inside it.
CROP_WIDTH = 640
CROP_HEIGHT = 400
MARKER_RADIUS = 12
REASONING_CHARS = 2_000


class UnreadableScreenshot(ValueError):
    """A screenshot that is no image, or a point outside it."""


def crop_around(image_bytes: bytes, x: float, y: float) -> str:
    """A PNG data URI of the screenshot's part around (x, y), with the point ringed in red."""
    try:
        with Image.open(io.BytesIO(image_bytes)) as image:
            image = image.convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError) as error:
        raise UnreadableScreenshot(f"not an image: {error}") from None
    width, height = image.size
    if not (0 <= x < width and 0 <= y < height):
        raise UnreadableScreenshot(f"the point ({x:g}, {y:g}) is outside the {width}x{height} screenshot")
    left = int(min(max(x - CROP_WIDTH / 2, 0), max(width - CROP_WIDTH, 0)))
    top = int(min(max(y - CROP_HEIGHT / 2, 0), max(height - CROP_HEIGHT, 0)))
    crop = image.crop((left, top, min(left + CROP_WIDTH, width), min(top + CROP_HEIGHT, height)))
    cx, cy = x - left, y - top
    draw = ImageDraw.Draw(crop)
    draw.ellipse((cx - MARKER_RADIUS, cy - MARKER_RADIUS, cx + MARKER_RADIUS, cy + MARKER_RADIUS),
                 outline=(255, 0, 0), width=3)
    buffer = io.BytesIO()
    crop.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def element_question(reasoning: str, action: str, x: float, y: float, screenshot_sha256: str,
                     crop_uri: str) -> Question:
    reasoning = reasoning.strip()
    if len(reasoning) > REASONING_CHARS:
        reasoning = f"[...] {reasoning[-REASONING_CHARS:]}"
    return Question(ELEMENT_AT_POINT, {"reasoning": reasoning, "action": action.strip(), "point": [x, y],
                                       "screenshot": screenshot_sha256, "crop": [CROP_WIDTH, CROP_HEIGHT]},
                    images=(crop_uri,))


def prompt_fields(question: Question) -> dict:
    inputs = question.inputs
    return {"reasoning": inputs["reasoning"] or "(the step records no reasoning)", "action": inputs["action"]}
