"""Charts of runs' metrics, drawn server-side with matplotlib's Agg backend (Django-free).

Plain data in, SVG or PNG bytes out; nothing is fetched from anywhere (the fonts ship with
matplotlib). SVG text is drawn as paths, so run names, which users choose, never become markup
in the file, and a fixed hash salt makes the same data give the same bytes.
"""

import io
import math
from collections.abc import Mapping, Sequence

import matplotlib
import matplotlib.transforms
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

FORMATS = {"svg": "image/svg+xml", "png": "image/png"}
KINDS = ("box", "violin")
LABEL_LENGTH = 28
_SAVE = {"svg.fonttype": "path", "svg.hashsalt": "trajscope"}
_METADATA = {"svg": {"Date": None}, "png": {"Software": None}}


def _short(label: str) -> str:
    return label if len(label) <= LABEL_LENGTH else label[: LABEL_LENGTH - 1] + "…"


def _figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _unit_axis(axes, label: str) -> None:
    axes.set_ylim(-0.03, 1.03)
    axes.set_ylabel(label)
    axes.grid(axis="y", color="#e3e6eb", linewidth=0.8)
    axes.set_axisbelow(True)


def distribution_chart(series: Mapping[str, Sequence[float]], *, label: str, kind: str = "box") -> Figure:
    """One box (or violin) per run of a metric's per-trajectory values; runs without values stay empty."""
    if kind not in KINDS:
        raise ValueError(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
    names = list(series)
    figure = _figure(max(4.5, 0.9 * len(names) + 2), 4.2)
    axes = figure.add_subplot()
    filled = [(position, list(values)) for position, values in enumerate(series.values(), start=1) if values]
    if filled:
        positions, data = zip(*filled)
        if kind == "box":
            axes.boxplot(data, positions=positions, widths=0.6, showmeans=True, meanprops={"marker": "D"})
        else:
            axes.violinplot(data, positions=positions, showmeans=True, showextrema=True)
    ticks = [f"{_short(name)}\n(n={len(values)})" for name, values in series.items()]
    axes.set_xticks(range(1, len(names) + 1), ticks, rotation=30, ha="right")
    axes.set_xlim(0.4, len(names) + 0.6)
    _unit_axis(axes, label)
    axes.set_title(f"{label}: distribution per run ({kind})")
    return figure


def site_bars(sites: Sequence[str], series: Mapping[str, Sequence[float | None]], *, label: str) -> Figure:
    """Grouped bars: per site, one bar per run; a missing value leaves a gap."""
    figure = _figure(max(5.0, 0.5 * len(sites) * max(len(series), 1) + 2.5), 4.4)
    axes = figure.add_subplot()
    width = 0.8 / max(len(series), 1)
    for k, (name, means) in enumerate(series.items()):
        offsets = [i - 0.4 + width * (k + 0.5) for i in range(len(sites))]
        heights = [mean if mean is not None else math.nan for mean in means]
        axes.bar(offsets, heights, width=width * 0.95, label=_short(name))
    axes.set_xticks(range(len(sites)), [_short(site) for site in sites], rotation=20, ha="right")
    _unit_axis(axes, label)
    axes.set_title(f"{label} by site")
    if series:
        axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def scatter_chart(points: Sequence[tuple[str, float | None, float | None]], *, x_label: str, y_label: str) -> Figure:
    """One labelled point per run; runs lacking either value are listed under the chart instead."""
    figure = _figure(6.4, 4.8)
    axes = figure.add_subplot()
    shown = [(name, x, y) for name, x, y in points if x is not None and y is not None]
    for name, x, y in shown:
        axes.scatter([x], [y], s=36)
    axes.set_xlim(-0.03, 1.03)
    axes.set_xlabel(x_label)
    _unit_axis(axes, y_label)
    axes.grid(axis="x", color="#e3e6eb", linewidth=0.8)
    axes.set_title(f"{y_label} vs {x_label.lower()}")
    missing = [name for name, x, y in points if x is None or y is None]
    if missing:
        figure.supxlabel("not plotted (no value): " + ", ".join(_short(name) for name in missing), fontsize=7,
                         color="#5b6475")
    _place_labels(figure, axes, shown)
    return figure


# Where a point's label may go, in points from the point, nearest first: beside it, above, below, the
# diagonals, then farther out (with a line back to the point).
_DIRECTIONS = ((1, 0.2), (-1, 0.2), (0, 1), (0, -1.4), (1, 1), (-1, 1), (1, -1), (-1, -1),
               (0.5, 1.5), (-0.5, 1.5), (0.5, -1.5), (-0.5, -1.5))
_DISTANCES = (6, 16, 28, 42, 60, 80, 105, 130)


def _overlap(box, others) -> float:
    total = 0.0
    for other in others:
        width = min(box.x1, other.x1) - max(box.x0, other.x0)
        height = min(box.y1, other.y1) - max(box.y0, other.y0)
        total += max(width, 0) * max(height, 0)
    return total


def _place_labels(figure: Figure, axes, shown: Sequence[tuple[str, float, float]]) -> None:
    """Label each point where the label overlaps no other label and no point, inside the axes.

    Runs often score alike, and labels written beside each point then print over each other: the
    candidate places are tried nearest first, measured on the laid-out figure, and when none is free
    the least covered one is taken. The labels are kept out of the layout so that placing them does
    not move the axes they were measured against.
    """
    if not shown:
        return
    figure.canvas.draw()  # lays the figure out: positions in pixels are final from here
    renderer = figure.canvas.get_renderer()
    frame = axes.get_window_extent(renderer)
    markers = [axes.transData.transform((x, y)) for _, x, y in shown]
    taken = [matplotlib.transforms.Bbox.from_bounds(px - 4, py - 4, 8, 8) for px, py in markers]
    for name, x, y in shown:
        best = None  # (overlap, distance, dx, dy)
        for distance in _DISTANCES:
            for dx, dy in _DIRECTIONS:
                box = _label(axes, name, x, y, dx, dy, distance)
                inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
                score = _overlap(box, taken) + (0 if inside else 1e9)
                if best is None or score < best[0]:
                    best = (score, distance, dx, dy)
                if score == 0:
                    break
            if best[0] == 0:
                break
        _, distance, dx, dy = best
        taken.append(_label(axes, name, x, y, dx, dy, distance, keep=True))


def _label(axes, name: str, x: float, y: float, dx: float, dy: float, distance: float, keep: bool = False):
    """Draw the point's label at this place and return its box in pixels (removed again unless `keep`)."""
    label = axes.annotate(
        _short(name), (x, y), textcoords="offset points", xytext=(dx * distance, dy * distance), fontsize=8,
        ha="left" if dx > 0 else "right" if dx < 0 else "center", va="center",
        arrowprops={"arrowstyle": "-", "color": "#9aa3b2", "linewidth": 0.6} if distance > 16 else None,
    )
    label.set_in_layout(False)
    box = label.get_window_extent(axes.figure.canvas.get_renderer())
    if not keep:
        label.remove()
    return box


def render(figure: Figure, fmt: str) -> bytes:
    if fmt not in FORMATS:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    buffer = io.BytesIO()
    with matplotlib.rc_context(_SAVE):
        figure.savefig(buffer, format=fmt, dpi=120, metadata=_METADATA[fmt])
    return buffer.getvalue()
