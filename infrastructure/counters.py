"""Event counters for `/metrics`: added to when the event's transaction commits, read at scrape time.

A counter lives in the database, so every web process and worker on every host adds to the same
value, and one scrape anywhere sees it all.
"""

import json
from collections import defaultdict
from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.db.models import F


def _key(labels: dict) -> str:
    return json.dumps({k: str(v) for k, v in labels.items()}, sort_keys=True)


def count(name: str, amount: float = 1, **labels) -> None:
    count_many([(name, labels, amount)])


def count_many(increments: Iterable[tuple[str, dict, float]]) -> None:
    """Add to counters once the caller's transaction commits (at once outside one): an event
    that rolled back did not happen, and the counter rows stay locked only for an instant."""
    totals: dict[tuple[str, str], float] = defaultdict(float)
    for name, labels, amount in increments:
        totals[(name, _key(labels))] += amount
    pending = {key: amount for key, amount in totals.items() if amount}
    if pending:
        transaction.on_commit(lambda: _add(pending), robust=True)


def _add(totals: dict[tuple[str, str], float]) -> None:
    """In one transaction: a commit each would wait for the disk as many times (a chunk of an
    evaluation counts ten or so)."""
    from infrastructure.models import EventCounter

    with transaction.atomic():
        for (name, labels), amount in sorted(totals.items()):  # one order everywhere: no deadlocks
            rows = EventCounter.objects.filter(name=name, labels=labels)
            if rows.update(value=F("value") + amount):
                continue
            try:
                with transaction.atomic():
                    EventCounter.objects.create(name=name, labels=labels, value=amount)
            except IntegrityError:  # created by another process meanwhile
                rows.update(value=F("value") + amount)


def values(prefix: str = "") -> dict[str, list[tuple[dict, float]]]:
    """Every counter whose name starts with `prefix`, with its label sets and values."""
    from infrastructure.models import EventCounter

    found: dict[str, list[tuple[dict, float]]] = defaultdict(list)
    for name, labels, value in EventCounter.objects.filter(name__startswith=prefix).values_list(
            "name", "labels", "value").order_by("name", "labels"):
        found[name].append((json.loads(labels), value))
    return found
