import base64

import pytest

from tests.trajectories.renders import png
from trajectories.formats.canonical import Outcome, Step, TaskRef, Trajectory, TrajectoryFormatError
from trajectories.formats.screenshots import load_image, sniff, take_images


def _no_files(relative):
    raise FileNotFoundError(relative)


def _uri(data: bytes, kind="image/png") -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


def test_images_are_recognised_by_their_bytes():
    assert sniff(png()) == ("image/png", "png")
    assert sniff(b"\xff\xd8\xff\xe0rest") == ("image/jpeg", "jpg")
    assert sniff(b"GIF89a....") == ("image/gif", "gif")
    assert sniff(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == ("image/webp", "webp")
    assert sniff(b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>") is None


def test_data_uris_and_relative_files():
    image = load_image(_uri(png()), _no_files)
    assert image.content_type == "image/png" and image.data == png()
    files = {"shots/1.png": png((1, 2, 3))}
    assert load_image("shots/1.png", files.__getitem__).data == png((1, 2, 3))


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (_uri(b"<svg onload=alert(1)></svg>", "image/svg+xml"), "not a PNG, JPEG, GIF or WebP image"),
        ("data:image/png,rawbytes", "only base64 data: URIs"),
        ("http://example.org/shot.png", "expected a data: URI or a path relative"),
        ("/etc/passwd", "expected a data: URI or a path relative"),
        ("missing.png", "not found beside the trajectory"),
    ],
)
def test_anything_else_is_refused(reference, message):
    with pytest.raises(ValueError, match=message):
        load_image(reference, _no_files)


def test_steps_refer_to_their_images_by_hash_so_the_encoding_does_not_matter():
    red, blue = png((255, 0, 0)), png((0, 0, 255))
    trajectory = Trajectory(
        task=TaskRef("3"),
        steps=[Step(1, "scroll [down]", screenshot=_uri(red)), Step(2, "scroll [down]", screenshot="a.png"),
               Step(3, "stop [x]", screenshot=_uri(blue)), Step(4, "stop [x]", screenshot="")],
        outcome=Outcome("answered"),
    )
    images = take_images(trajectory, {"a.png": red}.__getitem__)
    assert len(images) == 2
    refs = [step.screenshot for step in trajectory.steps]
    assert refs[0] == refs[1] == f"sha256:{images[refs[0][7:]].sha256}"
    assert refs[2] != refs[0] and refs[3] is None

    broken = Trajectory(task=TaskRef("3"), outcome=Outcome("no_stop"),
                        steps=[Step(1, "scroll [down]", screenshot=_uri(red)),
                               Step(2, "scroll [down]", screenshot=_uri(b"not an image"))])
    with pytest.raises(TrajectoryFormatError) as caught:
        take_images(broken, _no_files)
    assert caught.value.where == "steps[1].screenshot"
