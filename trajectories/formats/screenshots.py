"""Screenshots of a trajectory's steps: decoded, checked to be images, and named by their hash.

Only PNG, JPEG, GIF and WebP are accepted, recognised by their bytes rather than by what the
file claims: screenshots are served from the platform's own origin, where an SVG or an HTML
page posing as an image could run script.
"""

import binascii
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import pybase64

from .canonical import Trajectory, TrajectoryFormatError

REFERENCE_PREFIX = "sha256:"


@dataclass(frozen=True)
class Image:
    """A decoded screenshot; `data` is emptied once the file is written, the rest stays."""

    sha256: str
    data: bytes
    content_type: str
    extension: str
    size: int


def sniff(data: bytes) -> tuple[str, str] | None:
    """(content type, file extension) of an accepted image format, else None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png", "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg", "jpg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif", "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp", "webp"
    return None


def _data_uri_bytes(uri: str) -> bytes:
    header, comma, payload = uri.partition(",")
    if not comma or not header.endswith(";base64"):
        raise ValueError("only base64 data: URIs are accepted")
    try:
        # pybase64 decodes as the standard library does (characters outside the alphabet are
        # skipped), with SIMD: base64 decoding was the largest part of reading a render file.
        return pybase64.b64decode(payload)
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"invalid base64: {error}") from None


def load_image(reference: str, read_sibling: Callable[[str], bytes]) -> Image:
    """The image a step's `screenshot` names: a `data:` URI or a path relative to the trajectory file."""
    if reference.startswith("data:"):
        data = _data_uri_bytes(reference)
    elif "://" in reference or reference.startswith(("/", "\\")):
        raise ValueError("expected a data: URI or a path relative to the trajectory file")
    else:
        try:
            data = read_sibling(reference)
        except FileNotFoundError:
            raise ValueError(f"file {reference!r} not found beside the trajectory") from None
    kind = sniff(data)
    if kind is None:
        raise ValueError("not a PNG, JPEG, GIF or WebP image")
    return Image(sha256=hashlib.sha256(data).hexdigest(), data=data, content_type=kind[0], extension=kind[1],
                 size=len(data))


def take_images(trajectory: Trajectory, read_sibling: Callable[[str], bytes]) -> dict[str, Image]:
    """Load every step's screenshot and leave `sha256:<hex>` in its place, so that the content hash
    of the trajectory does not depend on how its images were encoded. Returns the images by hash."""
    images: dict[str, Image] = {}
    for position, step in enumerate(trajectory.steps):
        if not step.screenshot:
            step.screenshot = None
            continue
        try:
            image = load_image(step.screenshot, read_sibling)
        except ValueError as error:
            raise TrajectoryFormatError(str(error), where=f"steps[{position}].screenshot") from None
        images.setdefault(image.sha256, image)
        step.screenshot = REFERENCE_PREFIX + image.sha256
    return images
