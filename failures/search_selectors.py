"""Reads for the search of steps across a collection: keyword and meaning together, scoped by run,
benchmark, outcome and failure type; attribution notes only where the trajectory page would show them."""

import math
import operator
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache, reduce

import numpy as np
from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection
from django.db.models import F, Func, OuterRef, Q, QuerySet, Subquery, TextField, Value, prefetch_related_objects
from django.db.models.functions import Substr
from django.urls import reverse
from django.utils.http import urlencode

from accounts.roles import ANNOTATOR, has_role
from judges.embeddings import sentence_encoder
from trajectories.models import AgentRun, Step, Task, Trajectory

from .selectors import failure_type_choices
from .models import AttributionSource, FailureAttribution, SourceKind, StepDocument, StepVector, StepVectorsVersion
from .step_search import Snippet, dequantize, fuse, matched_terms, nearest, query_terms, snippet

LIMIT = 50
KEYWORD_CANDIDATES = 1000  # steps holding a query word read to rank them
SEARCH_CONFIG = "english"  # PostgreSQL's dictionary, the one `StepDocument`'s trigger stems the steps' texts with
TEXT_HEAD = 5000  # characters of each text searched for the snippet
STEP_TEXTS = ("reasoning", "action", "action_value", "observation")
OUTCOMES = {"success": Q(success=True), "failure": Q(success=False), "unknown": Q(success__isnull=True)}


@dataclass(frozen=True)
class SearchFilters:
    run_id: int | None = None
    benchmark: str = ""
    outcome: str = ""  # a key of OUTCOMES, or blank
    failure_type: str = ""
    source_id: int | None = None  # whose failure types; blank: any source


@dataclass(frozen=True)
class StepHit:
    trajectory: Trajectory
    index: int
    snippet: Snippet | None
    keyword_terms: int  # query words the step's texts hold
    similarity: float | None  # cosine to the query, when the step's vector is among the nearest
    query: str = ""

    @property
    def url(self) -> str:
        """The trajectory page at the step, on the page of steps that holds it, the query's words marked there."""
        page = math.ceil(self.index / settings.TRAJECTORY_STEPS_PER_PAGE)
        query = {"find": self.query, "find_step": self.index} if self.query else {}
        if page > 1:
            query["steps_page"] = page
        mark = f"?{urlencode(query)}" if query else ""
        return f"{reverse('metrics:trajectory-detail', args=[self.trajectory.pk])}{mark}#step-{self.index}"


def visible_attributions(user) -> QuerySet[FailureAttribution]:
    """The attributions the trajectory pages show the user: an annotator sees none of a failed
    trajectory's until they have annotated it themselves (`selectors.failure_panel`)."""
    rows = FailureAttribution.objects.all()
    if not has_role(user, ANNOTATOR):
        return rows
    annotated = FailureAttribution.objects.filter(annotator_id=user.pk, source__kind=SourceKind.HUMAN)
    return rows.filter(Q(trajectory__success=True) | Q(trajectory_id__in=annotated.values("trajectory_id")))


def scoped_trajectories(user, filters: SearchFilters) -> QuerySet[Trajectory]:
    # Every account sees every run's trajectory pages (`trajectories.selectors.viewer_trajectories`).
    rows = Trajectory.objects.all()
    if filters.run_id is not None:
        rows = rows.filter(run_id=filters.run_id)
    if filters.benchmark:
        rows = rows.filter(task__benchmark=filters.benchmark)
    if filters.outcome in OUTCOMES:
        rows = rows.filter(OUTCOMES[filters.outcome])
    if filters.failure_type:
        typed = visible_attributions(user).filter(failure_type=filters.failure_type)
        if filters.source_id is not None:
            typed = typed.filter(source_id=filters.source_id)
        rows = rows.filter(pk__in=typed.values("trajectory_id"))
    return rows


def _is_everything(filters: SearchFilters) -> bool:
    return filters == SearchFilters()


@lru_cache(maxsize=1)
def _all_vectors(version: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every stored vector with its step's trajectory and index, kept in memory as float32 while the vectors'
    version (`StepVectorsVersion`, read before them; a step's move changes it too) stays the same: converting
    them for each query cost more than the search (1.5 KB a step, 150 MB at 100,000)."""
    trajectories, indexes, vectors = [], [], []
    for trajectory_id, index, vector in (StepVector.objects.order_by("step_id")
                                         .values_list("step__trajectory_id", "step__index", "vector")):
        trajectories.append(trajectory_id)
        indexes.append(index)
        vectors.append(bytes(vector))
    matrix = (dequantize(np.frombuffer(b"".join(vectors), dtype=np.int8).reshape(len(vectors), -1)) if vectors
              else np.zeros((0, 1), dtype=np.float32))
    return np.array(trajectories, dtype=np.int64), np.array(indexes, dtype=np.int64), matrix


def meaning_ranking(query: str, scope: QuerySet[Trajectory], everything: bool) -> dict[tuple[int, int], float]:
    """(trajectory id, step index) → cosine, for the LIMIT steps in scope nearest the query, nearest first."""
    trajectories, indexes, matrix = _all_vectors(StepVectorsVersion.objects.values_list("stamp", flat=True).first())
    if not len(trajectories):
        return {}
    if not everything:
        inside = np.isin(trajectories, np.fromiter(scope.order_by().values_list("pk", flat=True), dtype=np.int64))
        trajectories, indexes, matrix = trajectories[inside], indexes[inside], matrix[inside]
    query_vector = sentence_encoder().encode([query])[0]
    return {(int(trajectories[row]), int(indexes[row])): cosine
            for row, cosine in nearest(query_vector, matrix, LIMIT)}


def keyword_ranking(terms: tuple[str, ...], scope: QuerySet[Trajectory], user,
                    everything: bool = False) -> dict[tuple[int, int], float]:
    """(trajectory id, step index) → how well the step, its final answer (the last step's) or a visible
    attribution note on it holds the query's words, best first. PostgreSQL searches its full-text index,
    SQLite the texts themselves: this is the one place that chooses."""
    if not terms:
        return {}
    matches = full_text_matches if connection.vendor == "postgresql" else substring_matches
    found: dict[tuple[int, int], float] = {}
    for trajectory_id, index, score in matches(terms, scope, user, everything):
        if index is not None:
            found[trajectory_id, index] = max(found.get((trajectory_id, index), 0), score)
    return dict(sorted(found.items(), key=lambda item: -item[1]))


def full_text_matches(terms: tuple[str, ...], scope: QuerySet[Trajectory], user,
                      everything: bool = False) -> Iterator[tuple[int, int | None, float]]:
    """(trajectory id, step index, rank) of the steps holding any of the words as PostgreSQL's English
    dictionary stems them (`StepDocument`, `StepPageDocument`, GIN indexes): first those whose reasoning,
    action or typed text holds one, by `ts_rank`; then, up to KEYWORD_CANDIDATES in all, those whose page
    text alone does, the ones holding every word first, unranked (rank 0: ranking page texts would read the
    words of every page holding a common word). Final answers and notes, a few short texts, are read whole
    and ranked."""
    any_word = reduce(operator.or_, (SearchQuery(term, config=SEARCH_CONFIG) for term in terms))
    every_word = reduce(operator.and_, (SearchQuery(term, config=SEARCH_CONFIG) for term in terms))
    documents = StepDocument.objects.all() if everything else StepDocument.objects.filter(trajectory__in=scope)
    found = {(trajectory_id, index): rank for trajectory_id, index, rank
             in documents.filter(words=any_word).annotate(rank=SearchRank(F("words"), any_word))
             .order_by("-rank", "step_id").values_list("trajectory_id", "index", "rank")[:KEYWORD_CANDIDATES]}
    on_pages, room = documents.exclude(words=any_word), KEYWORD_CANDIDATES - len(found)
    # With one word, holding any is holding every: the second tier would only repeat the first.
    for tier in (on_pages.filter(page__words=every_word), on_pages.filter(page__words=any_word))[:len(terms)]:
        if len(found) == KEYWORD_CANDIDATES:
            break
        for key in tier.values_list("trajectory_id", "index")[:room]:
            if len(found) == KEYWORD_CANDIDATES:
                break
            found.setdefault(key, 0.0)
    yield from ((trajectory_id, index, rank) for (trajectory_id, index), rank in found.items())
    answer = SearchVector(_markup_as_words("final_answer"), config=SEARCH_CONFIG)
    yield from (scope.annotate(answer=answer).filter(answer=any_word)
                .annotate(rank=SearchRank(answer, any_word), last=_last_index())
                .values_list("pk", "last", "rank")[:KEYWORD_CANDIDATES])
    note = SearchVector(_markup_as_words("note"), config=SEARCH_CONFIG)
    yield from (visible_attributions(user).filter(trajectory__in=scope, step_index__isnull=False)
                .annotate(words=note).filter(words=any_word).annotate(rank=SearchRank(note, any_word))
                .values_list("trajectory_id", "step_index", "rank")[:KEYWORD_CANDIDATES])


def _last_index() -> Subquery:
    """A trajectory's last step's index (its final answer is searched and shown as that step's): one read of
    the (trajectory, index) index where grouping its steps would read them all."""
    return Subquery(Step.objects.filter(trajectory=OuterRef("pk")).order_by("-index").values("index")[:1])


def _markup_as_words(field: str) -> Func:
    """The text with its angle brackets as spaces, as `StepDocument`'s trigger reads a step's: the parser would
    drop a tag's words (and a script's body)."""
    return Func(F(field), Value("<>"), Value("  "), function="translate", output_field=TextField())


def substring_matches(terms: tuple[str, ...], scope: QuerySet[Trajectory], user,
                      everything: bool = False) -> Iterator[tuple[int, int | None, float]]:
    """(trajectory id, step index, query words held) of the first KEYWORD_CANDIDATES steps whose texts hold
    any of the words, case ignored (no index serves this: every step's texts are read), and of the final
    answers and visible notes holding one."""
    holds = Q()
    for term in terms:
        for field in STEP_TEXTS:
            holds |= Q(**{f"{field}__icontains": term})
    steps = Step.objects.filter(holds) if everything else Step.objects.filter(holds, trajectory__in=scope)
    heads = {f"{field}_head": Substr(field, 1, TEXT_HEAD) for field in STEP_TEXTS}
    for trajectory_id, index, *texts in (steps.annotate(**heads).values_list("trajectory_id", "index", *heads)
                                         [:KEYWORD_CANDIDATES]):
        yield trajectory_id, index, matched_terms(terms, texts)
    answers = reduce(operator.or_, (Q(final_answer__icontains=term) for term in terms))
    for trajectory_id, answer, last in (scope.filter(answers).annotate(last=_last_index())
                                        .values_list("pk", "final_answer", "last")[:KEYWORD_CANDIDATES]):
        yield trajectory_id, last, matched_terms(terms, [answer])
    notes = reduce(operator.or_, (Q(note__icontains=term) for term in terms))
    for trajectory_id, index, note in (visible_attributions(user).filter(notes, trajectory__in=scope, step_index__isnull=False)
                                       .values_list("trajectory_id", "step_index", "note")[:KEYWORD_CANDIDATES]):
        yield trajectory_id, index, matched_terms(terms, [note])


def search_steps(user, query: str, filters: SearchFilters = SearchFilters()) -> list[StepHit]:
    """The LIMIT steps best matching the query, by keyword and by meaning, best first."""
    query = query.strip()
    if not query:
        return []
    if user.is_authenticated:  # the role is asked for the notes searched and again for those shown: read once
        prefetch_related_objects([user], "groups")
    scope = scoped_trajectories(user, filters)
    terms = query_terms(query)
    everything = _is_everything(filters)
    by_words = keyword_ranking(terms, scope, user, everything)
    similarity = meaning_ranking(query, scope, everything)
    ranked = fuse(list(by_words), list(similarity))[:LIMIT]
    return _hits(query, ranked, terms, by_words, similarity, user)


def _hits(query, ranked, terms, by_words, similarity, user) -> list[StepHit]:
    if not ranked:
        return []
    indexes: dict[int, list[int]] = {}  # trajectory id → its steps' indexes among the results
    for trajectory_id, index in ranked:
        indexes.setdefault(trajectory_id, []).append(index)
    wanted = reduce(operator.or_, (Q(trajectory_id=trajectory_id, index__in=chosen)
                                   for trajectory_id, chosen in indexes.items()))
    heads = {f"{field}_head": Substr(field, 1, TEXT_HEAD) for field in STEP_TEXTS}
    # Read into dicts, unordered: a step's default order joins its trajectory's run and task.
    texts = {(trajectory_id, index): dict(zip(STEP_TEXTS, values)) for trajectory_id, index, *values
             in Step.objects.filter(wanted).order_by().annotate(**heads).values_list("trajectory_id", "index", *heads)}
    notes: dict[tuple[int, int], list[str]] = {}
    for trajectory_id, index, note in (visible_attributions(user).filter(trajectory_id__in=list(indexes))
                                       .exclude(note="").values_list("trajectory_id", "step_index", "note")):
        notes.setdefault((trajectory_id, index), []).append(note)
    trajectories = (Trajectory.objects.select_related("run", "task").annotate(last_step=_last_index()).order_by()
                    .in_bulk(list(indexes)))
    hits = []
    for key in ranked:
        trajectory = trajectories[key[0]]
        fields = {**texts.get(key, {}), "note": " · ".join(notes.get(key, []))}
        if key[1] == trajectory.last_step:
            fields["final answer"] = trajectory.final_answer or ""
        held = matched_terms(terms, list(fields.values())) if key in by_words else 0
        hits.append(StepHit(trajectory, key[1], snippet(terms, fields), held, similarity.get(key), query))
    return hits


def search_filters(params) -> SearchFilters:
    """The filters of a page's or the API's query parameters; ValueError naming a bad one."""
    numbers = {}
    for name in ("run", "source"):
        raw = (params.get(name) or "").strip()
        if raw and not raw.isdigit():
            raise ValueError(f"{name}: a whole number, not {raw[:40]!r}")
        numbers[name] = int(raw) if raw else None
    outcome = (params.get("outcome") or "").strip()
    if outcome and outcome not in OUTCOMES:
        raise ValueError(f"outcome: one of {', '.join(OUTCOMES)}, not {outcome[:40]!r}")
    return SearchFilters(run_id=numbers["run"], benchmark=(params.get("benchmark") or "").strip(), outcome=outcome,
                         failure_type=(params.get("failure_type") or "").strip(), source_id=numbers["source"])


def filter_choices() -> dict:
    """What the search page offers to filter by."""
    return {"runs": AgentRun.objects.order_by("name"),
            "benchmarks": Task.objects.values_list("benchmark", flat=True).distinct().order_by("benchmark"),
            "outcomes": list(OUTCOMES), "failure_types": failure_type_choices(),
            "sources": AttributionSource.objects.all()}
