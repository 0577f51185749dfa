"""Charts of runs' metrics, drawn server-side with matplotlib's Agg backend (Django-free).

Plain data in, SVG or PNG bytes out; nothing is fetched from anywhere (the fonts ship with
matplotlib). SVG text is drawn as paths, so run names, which users choose, never become markup
in the file, and a fixed hash salt makes the same data give the same bytes.
"""

import io
import math
from collections.abc import Mapping, Sequence

import matplotlib
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
        axes.annotate(_short(name), (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    axes.set_xlim(-0.03, 1.03)
    axes.set_xlabel(x_label)
    _unit_axis(axes, y_label)
    axes.grid(axis="x", color="#e3e6eb", linewidth=0.8)
    axes.set_title(f"{y_label} vs {x_label.lower()}")
    missing = [name for name, x, y in points if x is None or y is None]
    if missing:
        figure.supxlabel("not plotted (no value): " + ", ".join(_short(name) for name in missing), fontsize=7,
                         color="#5b6475")
    return figure


def render(figure: Figure, fmt: str) -> bytes:
    if fmt not in FORMATS:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    buffer = io.BytesIO()
    with matplotlib.rc_context(_SAVE):
        figure.savefig(buffer, format=fmt, dpi=120, metadata=_METADATA[fmt])
    return buffer.getvalue()
