"""Formatting of numbers on the leaderboard and comparison pages.

The dense tables (runs x metrics, runs x sites, runs x outcomes) are built a row at a time in
Python: with 50 runs, a template include or format_html per cell costs several times the whole
rest of the page. These row tags put only numbers and the platform's own metric names into the
markup, which is why they may mark their output safe; the one that also writes a run's names
(`leaderboard_row`) escapes every text a user chose.
"""

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe

from metrics.definitions.final_answer import BY_LABELS
from trajectories.models import EarlyStopReason, OutcomeStatus, Paradigm

register = template.Library()

DASH = "—"
_LABELS = {**dict(OutcomeStatus.choices), **dict(EarlyStopReason.choices), **dict(Paradigm.choices)}


@register.filter
def label(key):
    """The display name of a stored outcome, early-stop reason or paradigm (the key itself otherwise)."""
    return _LABELS.get(key, key)


@register.simple_tag
def null_mark(notes, score, field: str):
    """The number of the note saying why `field` of `score` is null, linked to it (`selectors.NullNotes`)."""
    number = notes.mark(score.pk, field)
    if number is None:
        return ""
    return format_html('<sup class="null-mark"><a href="#null-note-{}" title="{}">{}</a></sup>', number,
                       notes.reasons[number - 1], number)


@register.filter
def checked_by(key):
    """How a requirement was checked against the final answer, in words."""
    return BY_LABELS.get(key, key)


@register.filter
def get(mapping, key):
    """`{{ row.metrics|get:metric }}`: a dict entry by a key held in a variable."""
    return mapping.get(key) if mapping else None


@register.filter
def signed(value, digits: int = 3):
    """A difference with its sign: +0.125, -0.040; a dash when there is none."""
    if value is None:
        return DASH
    return f"{value:+.{digits}f}"


@register.filter
def moment(value, with_time: bool = False):
    """An aware datetime as 2024-05-01 (or 2024-05-01 14:03) in the site's time zone; cheaper than `date`."""
    if not value:
        return ""
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d")


@register.filter
def pvalue(value):
    if value is None:
        return DASH
    return "<0.001" if value < 0.001 else f"{value:.3f}"


@register.filter
def share(value):
    """0.125 -> 12.5%."""
    return DASH if value is None else f"{100 * value:.1f}%"


def _summary(summary) -> str:
    """A metric's mean with its count and null count (an aggregation.Summary, or None); numbers only."""
    if summary is None:
        return f'<span class="muted">{DASH}</span>'
    if summary.mean is None:
        nulls = (f'<span class="rp-n">none of {int(summary.null_count)} computable</span>' if summary.null_count
                 else "")
        return f'<span class="muted">{DASH}</span>{nulls}'
    nulls = f" · {int(summary.null_count)} not computable" if summary.null_count else ""
    spread = f", std {summary.std:.3f}" if summary.std is not None else ""
    return (f'<span class="rp-mean">{summary.mean:.3f}</span><span class="rp-n" title="{int(summary.count)} values'
            f'{spread}; {int(summary.null_count)} not computable (null, left out)">n={int(summary.count)}{nulls}</span>')


def _metric_cells(summaries: dict, metrics, judge_notes: dict) -> str:
    """The `<td>` of every metric of a leaderboard row; `metrics` are the platform's (key, label) pairs.
    `judge_notes` ({metric: note number}, `leaderboard.judge_notes`) adds a mark that links to its note
    and is described by it: the note's sentence names the judge, so it is written once, under the table."""
    return "".join(
        f'<td class="num" data-metric="{key}">{_summary(summaries.get(key))}{_judge_mark(judge_notes.get(key))}</td>'
        for key, _ in metrics
    )


def _judge_mark(note: int | None) -> str:
    if not note:
        return ""
    note = int(note)
    return (f' <a class="rp-judge-mark" href="#judge-note-{note}" aria-describedby="judge-note-{note}">'
            f'&#9888;<sup>{note}</sup></a>')


@register.simple_tag
def summary_cells(summaries):
    """A `<td>` per summary of a list (site breakdown rows)."""
    return mark_safe("".join(f'<td class="num">{_summary(summary)}</td>' for summary in summaries))


@register.simple_tag
def outcome_cells(outcomes: dict):
    """A `<td>` per outcome category: count, share and successes (the paper's Table 7)."""
    cells = []
    for row in outcomes["rows"]:
        successes = f" · {int(row['successes'])} success" if row["successes"] else ""
        cells.append(f'<td class="num">{int(row["count"])} <span class="rp-n">{share(row["share"])}{successes}'
                     f"</span></td>")
    return mark_safe("".join(cells))


def _site_comparison(comparison) -> str:
    if not comparison.pairs:
        return f'<span class="muted">{DASH}</span>'
    interval = (f"[{signed(comparison.ci_low, 2)}, {signed(comparison.ci_high, 2)}] "
                if comparison.ci_low is not None else "")
    p = pvalue(comparison.wilcoxon_p).replace("<", "&lt;")
    return (f'<span class="rp-diff">{signed(comparison.mean_difference)}</span>'
            f'<span class="rp-n">{interval}p {p} · {int(comparison.pairs)} pair{"" if comparison.pairs == 1 else "s"}</span>')


@register.simple_tag
def site_comparison_cells(by_site):
    """A `<td>` per site of one metric's comparison: difference, CI, Wilcoxon p and pairs."""
    return mark_safe("".join(f'<td class="num">{_site_comparison(comparison)}</td>' for _, comparison in by_site))


def _run_downloads(export_urls, run_id: int, job_id: int, subset: str = "") -> str:
    """Links to a run's exports from one evaluation (restricted to a task subset when one is named);
    `export_urls` are reversed routes, (what, [(FORMAT, url)])."""
    scope = f"&amp;subset={escape(quote(subset))}" if subset else ""
    lines = (
        f"{what} " + " ".join(f'<a href="{url}?run={int(run_id)}&amp;job={int(job_id)}{scope}" download>{fmt}</a>'
                              for fmt, url in formats)
        for what, formats in export_urls
    )
    return "<br>".join(lines)


def _mean_std(summary: dict) -> str:
    if summary["mean"] is None:
        return DASH
    spread = f' <span class="rp-n">± {summary["std"]:.2f}</span>' if summary["std"] is not None else ""
    return f'{summary["mean"]:.2f}{spread}'


@register.simple_tag
def length_cells(lengths: dict):
    """Pairs, mean agent steps n, mean gold steps m (each ± std), mean n - m and trajectories without gold."""
    cells = (int(lengths["pairs"]), _mean_std(lengths["agent_steps"]), _mean_std(lengths["gold_steps"]),
             signed(lengths["mean_difference"], 2), int(lengths["without_gold"]))
    return mark_safe("".join(f'<td class="num">{cell}</td>' for cell in cells))


_ID = 2147483647  # an id no row has, to split a reversed route around


def route(name: str) -> Callable[[int], str]:
    """`reverse(name, args=[id])` for many ids, the route resolved once."""
    before, after = reverse(name, args=[_ID]).split(str(_ID), 1)
    return lambda pk: f"{before}{int(pk)}{after}"


@dataclass(frozen=True)
class LeaderboardRows:
    """What the rows of one leaderboard page share, prepared once for all of them."""

    metrics: list[tuple[str, str]]  # the metric columns after success, (key, label)
    success_label: str
    judge_notes: dict[int, dict[str, int]]  # `leaderboard.JudgeNotes.numbers`
    export_urls: list  # (what, [(FORMAT, url)]), for `_run_downloads`
    subset: str
    run_url: Callable[[int], str]  # `route`s
    job_url: Callable[[int], str]
    failure_source: str = ""  # the failure column's source, passed on to the run page it links to


@register.simple_tag
def leaderboard_row(row, rows: LeaderboardRows):
    """The `<tr>` of a leaderboard row (a `leaderboard.LeaderboardRow`). Its run's name, agent, model and
    benchmark, the judge's name and the verdict sources' labels are a user's text, escaped here."""
    name, agent, model = escape(row.name), escape(row.agent or DASH), escape(row.model or DASH)
    results_only = row.results_only
    unavailable = '<span class="muted">not available</span>'
    success = row.success
    if success is not None and success.mean is None:
        shown = f'<span class="muted rp-no-verdicts">no {escape(rows.success_label)} verdicts</span>'
    else:
        shown = _summary(success)
    others = "".join(f'<span class="rp-n rp-other-source" data-source="{escape(source)}">{escape(label)} '
                     f'{summary.mean:.3f}</span>' for source, label, summary in row.success_others)
    if results_only:
        metrics = "".join(f'<td class="num muted" data-metric="{key}">not available</td>' for key, _ in rows.metrics)
    else:
        metrics = _metric_cells(row.metrics, rows.metrics, rows.judge_notes.get(row.run_id, {}))
    evaluation = row.evaluation
    if evaluation:
        job = int(evaluation.job_id)
        made = (f'<a href="{rows.job_url(job)}">#{job}</a> <span class="muted">{escape(evaluation.judge)} · '
                f'{moment(evaluation.finished_at, True)}</span>')
        downloads = _run_downloads(rows.export_urls, row.run_id, job, rows.subset)
    else:
        made = ('<span class="tj-badge rp-results-only" title="Per-task verdicts only: no agent steps, so no other '
                'metric">results only</span> <span class="muted">imported verdicts</span>' if results_only
                else '<span class="muted">not evaluated</span>')
        downloads = ""
    uniform = (f'<span class="tj-warning rp-uniform" role="note">every verdict {"PASS" if row.uniform else "FAIL"}: '
               "check the file was read right</span>" if row.uniform is not None else "")
    scored = DASH if row.scored is None else int(row.scored)
    if row.partly_scored:
        scored = (f'{scored} <span class="rp-n rp-partly" title="Some of their judge questions failed: the metrics '
                  f'needing them are null">{int(row.partly_scored)} partly</span>')
    failure_types = "" if row.failure_types is None else (
        '<td data-col="failure-types">'
        + (" · ".join(f'<a data-type="{escape(item.key)}" href="{rows.run_url(row.run_id)}?failure_source='
                      f'{quote(rows.failure_source)}#run-failures">{escape(item.name)} {item.share:.0%}</a>'
                      for item in row.failure_types) or '<span class="muted">none attributed</span>') + "</td>\n")
    return mark_safe(
        f'<tr data-run="{name}">\n'
        f'      <td class="rp-run-col"><a href="{rows.run_url(row.run_id)}" title="{name} · agent {agent} · model '
        f'{model}">{name}</a>\n'
        f'        <span class="rp-n rp-run-details">{agent} · {model}</span></td>\n'
        f'      <td data-col="paradigm">{escape(label(row.paradigm))}</td>\n'
        f'      <td data-col="benchmark">{escape(row.benchmark)}</td>\n'
        f'      <td data-col="created">{moment(row.created_at)}</td>\n'
        f'      <td class="num" data-col="trajectories">{unavailable if results_only else row.trajectories}</td>\n'
        f'      <td class="num" data-col="scored">{unavailable if results_only else scored}</td>\n'
        f'      <td class="num" data-metric="success">{shown}{others}</td>\n'
        f'      {metrics}\n'
        f'      {failure_types}<td data-col="evaluation">{made}\n'
        f'        {uniform}</td>\n'
        f'      <td class="rp-row-downloads" data-col="downloads">{downloads}</td>\n'
        "    </tr>"
    )
