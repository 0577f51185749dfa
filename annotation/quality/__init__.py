"""Checks a reviewer runs over a benchmark's gold before trusting it (Django-free).

Each check turns plain task and gold records (`records`) into findings. The rooms:
- `step_text`: what a step or an intent says (its wording, the values it quotes and types);
- `terms`: the stemmed terms of a text, the unit of word fit;
- `intent_index`: which intents hold a term, and how rare it is among them;
- `fit`: how well each gold fits every intent, by its words and by the meaning of its steps;
- `fit_checks`: how a gold fits its task, one reason per gold, the most specific first (a
  template sibling's values, the worse version, belongs to another task, fits its own poorly);
- `step_checks`: the steps alone (duplicates under two tasks, too short or too long against the
  median of the task's other golds and its template siblings', one step, intent values never typed).
"""

from collections.abc import Callable

from . import fit_checks, step_checks
from .fit import Encoder, GoldFit
from .records import Finding, GoldRecord, TaskRecord, template_slots

__all__ = ["Finding", "GoldRecord", "TaskRecord", "check_gold", "template_slots"]


def check_gold(tasks: list[TaskRecord], golds: list[GoldRecord],
               progress: Callable[[int], None] | None = None, encoder: Encoder | None = None) -> list[Finding]:
    """Every check over a benchmark's gold; `progress(n)` is told how many golds are done. The
    encoder defaults to the MiniLM model the offline judge uses."""
    by_pk = {task.pk: task for task in tasks}
    golds = [gold for gold in golds if gold.task_pk in by_pk]
    if encoder is None and golds:
        from judges.embeddings import sentence_encoder

        encoder = sentence_encoder()
    findings = fit_checks.check_sibling_values(by_pk, golds)
    fit = GoldFit.measure(by_pk, golds, encoder)
    if progress:
        progress(len(golds) // 2)
    # One reason per gold, the most specific first: a sibling's values, then a better version beside it.
    for check in (fit_checks.check_worse_version, fit_checks.check_other_task, fit_checks.check_poor_fit):
        findings += check(fit, {finding.gold_pk for finding in findings})
    findings += step_checks.check_duplicates(by_pk, golds)
    findings += step_checks.check_lengths(by_pk, golds)
    findings += step_checks.check_intent_values(by_pk, golds)
    if progress:
        progress(len(golds))
    return findings
