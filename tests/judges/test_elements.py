"""The element at the point a coordinate agent acted on: the crop the judge sees, its answer read
strictly, and the openai backend asking it with the image (the scripted local server)."""

import base64
import io

import pytest
from PIL import Image

from judges import elements
from judges.local_llm import Reply
from judges.models import JudgeDecision
from judges.services import get_judge

pytestmark = pytest.mark.django_db


def _png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format="PNG")
    return buffer.getvalue()


def _image(uri: str) -> Image.Image:
    assert uri.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGB")


@pytest.mark.parametrize(("point", "ring_at"), [
    # Mid-screen: the crop is centred on the point: it starts at (700 - 320, 500 - 200) = (380, 300), the
    # point at (320, 200) in it.
    ((700, 500), (320, 200)),
    # Near the top-left corner the crop is clamped to the screenshot: the point stays where it is.
    ((15, 12), (15, 12)),
    # Near the bottom-right: the crop ends at the screenshot's edge, (1280 - 640, 800 - 400) = (640, 400).
    ((1270, 790), (1270 - 640, 790 - 400)),
])
def test_the_crop_keeps_the_point_and_rings_it(point, ring_at):
    crop = _image(elements.crop_around(_png(1280, 800), *point))
    assert crop.size == (elements.CROP_WIDTH, elements.CROP_HEIGHT)
    x, y = ring_at
    # The ring's left edge, MARKER_RADIUS (12) to the left of the point, is red; its centre is left white.
    assert crop.getpixel((x - elements.MARKER_RADIUS + 1, y)) == (255, 0, 0)
    assert crop.getpixel((x, y)) == (255, 255, 255)


def test_a_screenshot_smaller_than_the_crop_is_shown_whole():
    assert _image(elements.crop_around(_png(300, 200), 150, 100)).size == (300, 200)


def test_a_point_outside_the_screenshot_or_no_image_is_refused():
    with pytest.raises(elements.UnreadableScreenshot, match=r"\(1300, 10\) is outside the 1280x800 screenshot"):
        elements.crop_around(_png(1280, 800), 1300, 10)
    with pytest.raises(elements.UnreadableScreenshot, match="not an image"):
        elements.crop_around(b"\x89PNG not really", 1, 1)


def test_the_question_is_cached_by_the_screenshot_and_the_point_not_the_image():
    first = elements.element_question("x" * 2_100, "Click at (1, 2)", 1, 2, "a" * 64, "data:image/png;base64,AA")
    again = elements.element_question("x" * 2_100, "Click at (1, 2)", 1, 2, "a" * 64, "data:image/png;base64,BB")
    assert first.inputs_hash == again.inputs_hash and first.images != again.images
    # The reasoning kept is its last REASONING_CHARS characters, marked as cut.
    assert first.inputs["reasoning"] == "[...] " + "x" * elements.REASONING_CHARS


def test_the_openai_backend_asks_with_the_crop_and_repairs_a_malformed_answer(openai_config, llm_server):
    crop = elements.crop_around(_png(1280, 800), 600, 475)
    question = elements.element_question("I will open the Careers link.", "Click at (600, 475)", 600, 475,
                                         "b" * 64, crop)
    llm_server.queue(Reply({"element": "link 'Careers'", "intended": "sure"}),
                     Reply({"element": "link 'Careers'", "intended": True, "rationale": "The ring is on it."}))
    [verdict] = get_judge(openai_config).verdicts([question])
    assert (verdict.score, verdict.rationale, verdict.error) == (1.0, "link 'Careers': The ring is on it.", "")
    decision = JudgeDecision.objects.get(pk=verdict.decision_id)
    assert (decision.kind, decision.output, decision.calls) == (
        "element_at_point", {"element": "link 'Careers'", "intended": True}, 2)
    first = llm_server.requests[0]["messages"][-1]["content"]
    assert "I will open the Careers link." in first[0]["text"] and "Click at (600, 475)" in first[0]["text"]
    assert first[1] == {"type": "image_url", "image_url": {"url": crop}}
