"""Reads of gold trajectories: content, the annotation queue, the review queue, exports."""

from dataclasses import asdict, dataclass, field
from itertools import combinations

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery

from judges import questions as q
from judges.calibration import DEFAULT_THRESHOLD as DEFAULT_TAU
from judges.calibration import Agreement, Trust, best_threshold, trust
from judges.models import JudgeConfig, JudgeDecision
from judges.selectors import audit_sample_key, in_audit_sample, judge_step_from_gold, reviewed_pairs
from judges.services import get_judge
from trajectories.models import Task

from .agreement import (
    GoldSide,
    GroupAgreement,
    TaskAgreement,
    by_site,
    group_agreement,
    most_disagreeing,
    pair_agreement,
)
from .content import GoldContent
from .gold_records import GoldBlock, GoldStepRecord
from .models import Assignment, GoldCheckJob, GoldFlag, GoldStatus, GoldTrajectory
from .permissions import DONE
from accounts.roles import ADMIN, ANNOTATOR, REVIEWER

NO_GOLD = "none"
QUEUE_STATUSES = ((NO_GOLD, "No gold"),) + tuple(GoldStatus.choices)
NEEDS_WORK = (NO_GOLD, GoldStatus.DRAFT, GoldStatus.CHANGES_REQUESTED)


def _step_record(step) -> GoldStepRecord:
    return GoldStepRecord(
        text=step.text,
        label=step.source_label,
        action_type=step.action_type,
        element_role=step.element_role,
        element_name=step.element_name,
        value=step.value,
    )


def gold_content(gold: GoldTrajectory) -> GoldContent:
    return GoldContent(
        steps=[_step_record(step) for step in gold.steps.all()],
        cannot_complete=gold.cannot_complete,
        cannot_complete_reason=gold.cannot_complete_reason,
        final_answer=gold.final_answer,
    )


def gold_blocks(queryset: QuerySet) -> list[GoldBlock]:
    """Gold trajectories as file blocks, in task order, for export."""
    golds = queryset.select_related("task", "annotator").prefetch_related("steps").order_by(
        "task__benchmark", "task__number", "task__task_id", "created_at", "pk"
    )
    return [
        GoldBlock(
            task_id=gold.task.task_id,
            benchmark=gold.task.benchmark,
            steps=[_step_record(step) for step in gold.steps.all()],
            cannot_complete=gold.cannot_complete,
            cannot_complete_reason=gold.cannot_complete_reason,
            final_answer=gold.final_answer,
            annotator=gold.annotator.get_username(),
            status=gold.status,
        )
        for gold in golds
    ]


def annotator_accounts() -> QuerySet:
    """Accounts that hold the annotator role (reviewers and admins do too), by name: whom gold may be imported under."""
    return get_user_model().objects.filter(
        Q(is_superuser=True) | Q(groups__name__in=(ANNOTATOR, REVIEWER, ADMIN))
    ).distinct().order_by("username")


def my_gold_for_task(user, task: Task) -> GoldTrajectory | None:
    """The gold the user edits for this task: their web gold, else their newest imported one."""
    mine = GoldTrajectory.objects.filter(task=task, annotator=user).select_related("task", "annotator")
    return mine.filter(source_key="").order_by("-updated_at").first() or mine.order_by("-updated_at").first()


@dataclass
class QueueFilters:
    benchmark: str = ""
    site: str = ""
    status: str = ""
    assigned: bool = False
    search: str = ""


def task_sites() -> list[str]:
    sites = set()
    for sites_of_task in Task.objects.values_list("sites", flat=True).distinct():
        sites.update(sites_of_task or [])
    return sorted(sites)


def task_queue(user, filters: QueueFilters) -> QuerySet:
    """Tasks with the user's own gold status (`my_status`, None when they have none yet)."""
    mine = GoldTrajectory.objects.filter(task=OuterRef("pk"), annotator=user).order_by("-updated_at")
    tasks = Task.objects.annotate(
        my_status=Subquery(mine.values("status")[:1]),
        done_gold=Count("gold_trajectories", filter=Q(gold_trajectories__status__in=DONE), distinct=True),
        assigned=Exists(Assignment.objects.filter(task=OuterRef("pk"), annotator=user)),
    ).order_by("benchmark", "number", "task_id")
    if filters.benchmark:
        tasks = tasks.filter(benchmark=filters.benchmark)
    if filters.site:
        # Sites are a JSON list; its stored text holds each site as a quoted string on every backend.
        tasks = tasks.filter(sites__icontains=f'"{filters.site}"')
    if filters.status == NO_GOLD:
        tasks = tasks.filter(my_status__isnull=True)
    elif filters.status in GoldStatus.values:
        tasks = tasks.filter(my_status=filters.status)
    if filters.assigned:
        tasks = tasks.filter(assigned=True)
    if filters.search:
        search = filters.search.strip()
        tasks = tasks.filter(Q(task_id=search) | Q(intent__icontains=search))
    return tasks


def next_task(user, filters: QueueFilters, after: Task | None = None) -> Task | None:
    """The next task of the queue that still needs the user's work: an assigned one first, then
    the first one after `after` in queue order, wrapping around to the top. A task that already
    has approved gold is left out unless it is assigned to the user or they have started on it; a task
    without text (its files named it without saying what it asks) unless it is assigned: nobody can
    record gold for what they cannot read."""
    approved = Exists(GoldTrajectory.objects.filter(task=OuterRef("pk"), status=GoldStatus.APPROVED))
    queue = list(task_queue(user, filters).annotate(approved=approved)
                 .values_list("pk", "my_status", "assigned", "approved", "intent"))
    candidates = [(pk, assigned) for pk, status, assigned, has_approved, intent in queue
                  if (status or NO_GOLD) in NEEDS_WORK and (status or assigned or not has_approved)
                  and (intent.strip() or assigned)]
    if after is not None:
        candidates = [(pk, assigned) for pk, assigned in candidates if pk != after.pk]
    if not candidates:
        return None
    chosen = next((pk for pk, assigned in candidates if assigned), None)
    if chosen is None and after is not None:
        position = {pk: place for place, (pk, *_) in enumerate(queue)}
        after_place = position.get(after.pk, -1)
        chosen = next((pk for pk, _ in candidates if position[pk] > after_place), None)
    if chosen is None:
        chosen = candidates[0][0]
    return Task.objects.get(pk=chosen)


def review_queue(user) -> QuerySet:
    """Submitted gold waiting for a reviewer, oldest first; the reviewer's own gold is left out."""
    return (
        GoldTrajectory.objects.filter(status=GoldStatus.SUBMITTED)
        .exclude(annotator=user)
        .select_related("task", "annotator")
        .annotate(step_count=Count("steps"))
        .order_by("submitted_at", "pk")
    )


# Agreement between annotators -------------------------------------------------------------------


@dataclass
class AgreementReport:
    judge: str
    tau: float
    tasks: list[TaskAgreement]
    overall: GroupAgreement
    sites: list[GroupAgreement]
    most_disagreeing: list[TaskAgreement]


def _side(gold: GoldTrajectory, block: int) -> GoldSide:
    return GoldSide(gold.pk, gold.annotator.get_username(), len(gold.steps.all()), gold.cannot_complete,
                    source=gold.source, block=block)


def _blocks(golds: list[GoldTrajectory]) -> dict[int, int]:
    """Which block of its file each gold is, among the golds of one task: 1, 2, ... per
    (annotator, source), in the order they were stored."""
    counters: dict[tuple, int] = {}
    blocks = {}
    for gold in sorted(golds, key=lambda gold: gold.pk):
        key = (gold.annotator_id, gold.source)
        counters[key] = counters.get(key, 0) + 1
        blocks[gold.pk] = counters[key]
    return blocks


def agreement_report(*, judge_config: JudgeConfig | None = None, tau: float = DEFAULT_TAU,
                     benchmark: str = "", progress=None) -> AgreementReport:
    """Every task with two or more submitted or approved gold trajectories, each pair of them
    matched by the judge (whose decisions are cached, so a second look asks nothing new).
    `progress(done, total)` is told how many pairs are matched; the agreement job reports it."""
    golds = (
        GoldTrajectory.objects.filter(status__in=DONE)
        .select_related("task", "annotator")
        .prefetch_related("steps")
        .order_by("task__benchmark", "task__number", "task__task_id", "pk")
    )
    if benchmark:
        golds = golds.filter(task__benchmark=benchmark)
    by_task: dict[int, list[GoldTrajectory]] = {}
    for gold in golds:
        by_task.setdefault(gold.task_id, []).append(gold)
    judge = get_judge(judge_config)
    tasks = []
    total = sum(len(group) * (len(group) - 1) // 2 for group in by_task.values())
    done = 0
    for group in by_task.values():
        if len(group) < 2:
            continue
        pairs = []
        blocks = _blocks(group)
        for first, second in combinations(group, 2):
            scores = judge.step_scores(
                [judge_step_from_gold(step) for step in first.steps.all()],
                [judge_step_from_gold(step) for step in second.steps.all()],
            )
            pairs.append(pair_agreement(_side(first, blocks[first.pk]), _side(second, blocks[second.pk]),
                                        scores.matrix, tau=tau, error=scores.error))
            done += 1
            if progress:
                progress(done, total)
        task = group[0].task
        tasks.append(TaskAgreement(task.pk, task.benchmark, task.task_id, task.intent,
                                   "+".join(task.sites) or "(no site)", tuple(pairs)))
    name = f"{judge.backend.name}:{judge.backend.model}" if judge.backend.model else judge.backend.name
    return AgreementReport(
        judge=name,
        tau=tau,
        tasks=tasks,
        overall=group_agreement("all tasks", tasks),
        sites=by_site(tasks),
        most_disagreeing=most_disagreeing(tasks),
    )


def _pair_dict(pair) -> dict:
    return {**asdict(pair), "length_difference": pair.length_difference,
            "first": {**asdict(pair.first), "label": pair.first.label},
            "second": {**asdict(pair.second), "label": pair.second.label}}


def _task_dict(task: TaskAgreement) -> dict:
    return {"task_pk": task.task_pk, "benchmark": task.benchmark, "task_id": task.task_id, "intent": task.intent,
            "site": task.site, "agreement": task.agreement, "length_difference": task.length_difference,
            "gold_count": task.gold_count, "pairs": [_pair_dict(pair) for pair in task.pairs]}


def report_as_dict(report: AgreementReport) -> dict:
    """The report as stored by the agreement job and read back by its page."""
    return {
        "judge": report.judge, "tau": report.tau, "tasks": [_task_dict(task) for task in report.tasks],
        "overall": asdict(report.overall), "sites": [asdict(group) for group in report.sites],
        "most_disagreeing": [_task_dict(task) for task in report.most_disagreeing],
    }


def latest_gold_check(kind: str, benchmark: str = "", parameters: dict | None = None) -> GoldCheckJob | None:
    jobs = GoldCheckJob.objects.filter(kind=kind, benchmark=benchmark)
    if parameters is not None:
        jobs = jobs.filter(parameters=parameters)
    return jobs.order_by("-created_at", "-pk").first()


def open_flags(benchmark: str = "", kinds=None, *, with_steps: bool = False) -> QuerySet:
    """Active flags nobody dismissed, with what the pages show of them, the surest first within a
    kind; `with_steps` brings the steps of the flagged and the related gold, for evidence."""
    flags = GoldFlag.objects.filter(active=True, dismissed_at__isnull=True)
    if kinds:
        flags = flags.filter(kind__in=kinds)
    if benchmark:
        flags = flags.filter(gold__task__benchmark=benchmark)
    flags = flags.select_related("gold__task", "gold__annotator", "related_gold__task", "related_task").order_by(
        "kind", F("confidence").desc(nulls_last=True), "gold__task__number", "gold__task__task_id", "gold_id", "key")
    return flags.prefetch_related("gold__steps", "related_gold__steps") if with_steps else flags


def dismissed_flags(benchmark: str = "", kinds=None) -> QuerySet:
    flags = GoldFlag.objects.filter(dismissed_at__isnull=False)
    if kinds:
        flags = flags.filter(kind__in=kinds)
    if benchmark:
        flags = flags.filter(gold__task__benchmark=benchmark)
    return flags.select_related("gold__task", "gold__annotator", "dismissed_by").order_by("-dismissed_at")


def gold_changed_since(job: GoldCheckJob) -> int:
    """Golds of the job's scope saved after the job started: its results may be out of date."""
    if job.started_at is None:
        return 0
    golds = GoldTrajectory.objects.filter(Q(updated_at__gt=job.started_at) | Q(created_at__gt=job.started_at))
    if job.benchmark:
        golds = golds.filter(task__benchmark=job.benchmark)
    return golds.count()


# Judge audit ----------------------------------------------------------------------------------

_SIDES = {
    q.STEP_MATCH: (("Gold step", "gold"), ("Agent step", "agent")),
    q.TRAJECTORY_MATCH: (("Gold step", "gold"), ("Agent step", "agent")),
    q.REPETITION: (("Previous agent step", "previous"), ("Agent step", "step")),
    q.REQUIREMENTS: (("Requirement", "requirement"), ("Final answer", "answer")),
    q.FUZZY_ANSWER: (("Reference answer", "reference"), ("Final answer", "answer")),
}
AUDITED_KINDS = tuple(_SIDES)


NEAR_THRESHOLD, DISAGREEMENT, RANDOM_SAMPLE = "near_threshold", "disagreement", "random_sample"
FURTHER = "further_from_threshold"
AUDIT_REASONS = {
    NEAR_THRESHOLD: "near the threshold",
    DISAGREEMENT: "backends disagree",
    RANDOM_SAMPLE: "random sample",
    FURTHER: "next by closeness to the threshold",
}
# A score this close to tau is "near the threshold"; farther ones only fill the page's last slots.
NEAR_MARGIN = 0.15


@dataclass
class AuditItem:
    """One judge verdict a reviewer can confirm or overrule: a pair decision, or one cell (the
    best-scoring agent step for a gold step) of a whole-trajectory decision."""

    decision: JudgeDecision
    left_label: str
    left: dict
    right_label: str
    right: dict
    score: float
    inputs_hash: str
    gold_step: int | None = None
    agent_step: int | None = None
    context: list[str] = field(default_factory=list)  # the runs and tasks it scored, added by the audit page
    reason: str = ""  # why the queue offers it: one of AUDIT_REASONS
    others: list[tuple[str, float]] = field(default_factory=list)  # other judges' scores on the question

    @property
    def key(self) -> str:
        cell = f"-{self.gold_step}-{self.agent_step}" if self.gold_step else ""
        return f"{self.decision.pk}{cell}"

    @property
    def reason_label(self) -> str:
        return AUDIT_REASONS.get(self.reason, "")

    def judge_says(self, tau: float) -> bool:
        return self.score >= tau


def _side_of(value) -> dict:
    """A step's inputs as the judge saw them, or a plain text (a requirement, an answer) as {"text": ...}."""
    return value if isinstance(value, dict) else {"text": "" if value is None else str(value)}


def _pair_item(decision: JudgeDecision) -> AuditItem:
    (left_label, left_key), (right_label, right_key) = _SIDES[decision.kind]
    return AuditItem(decision, left_label, _side_of(decision.inputs.get(left_key)), right_label,
                     _side_of(decision.inputs.get(right_key)), decision.score, decision.inputs_hash)


def _cell_items(decision: JudgeDecision) -> list[AuditItem]:
    """Per gold step, the agent step the judge scored highest (the candidate match); among equal
    scores, the one nearest the gold step's position."""
    gold, agent = decision.inputs.get("gold", []), decision.inputs.get("agent", [])
    items = []
    for j, row in enumerate((decision.output or {}).get("matrix", [])):
        if not row or any(score is None for score in row):
            continue
        i = max(range(len(row)), key=lambda column: (row[column], -abs(column - j), -column))
        question = q.Question(q.STEP_MATCH, {"gold": gold[j], "agent": agent[i]})
        items.append(AuditItem(decision, "Gold step", gold[j], "Agent step", agent[i], row[i], question.inputs_hash,
                               gold_step=j + 1, agent_step=i + 1))
    return items


@dataclass
class AuditFilters:
    kind: str = ""
    backend: str = ""
    tau: float = DEFAULT_TAU


def _judge_label(decision: JudgeDecision) -> str:
    return f"{decision.backend}:{decision.model}" if decision.model else decision.backend


def audit_queue(filters: AuditFilters, limit: int = 25) -> tuple[list[AuditItem], int]:
    """Unreviewed judge verdicts worth a human's look, and how many there are to review.

    Three parts, each item labelled with its `reason`: scores within NEAR_MARGIN of tau, nearest
    first (up to 2/5 of the page), then questions two judges (backend and model) answered on opposite sides of tau
    (up to 2/5), then the audit's random sample (`judges.selectors.in_audit_sample`: one question
    in five, chosen and ordered by a hash of the question), whose confirmations give the
    judge-quality page an estimate without the bias of hard cases. Slots left go to the next
    scores nearest tau, labelled as further from it when they are. A question a human already answered, on any judge's decision, is not asked again.
    """
    decisions = JudgeDecision.objects.filter(score__isnull=False, human_score__isnull=True, kind__in=AUDITED_KINDS)
    if filters.kind:
        decisions = decisions.filter(kind=filters.kind)
    answered = set(JudgeDecision.objects.filter(human_score__isnull=False).values_list("inputs_hash", flat=True))
    items, seen = [], set()
    scores: dict[str, dict[str, float]] = {}  # every judge's score per question, whatever the filter
    for decision in decisions.order_by("-created_at", "-pk").iterator(chunk_size=500):
        candidates = _cell_items(decision) if decision.kind == q.TRAJECTORY_MATCH else [_pair_item(decision)]
        for item in candidates:
            if item.inputs_hash in answered:
                continue
            scores.setdefault(item.inputs_hash, {}).setdefault(_judge_label(decision), item.score)
            if (filters.backend and decision.backend != filters.backend) or item.inputs_hash in seen:
                continue
            seen.add(item.inputs_hash)
            items.append(item)
    for item in items:
        item.others = [(judge, score) for judge, score in scores[item.inputs_hash].items()
                       if judge != _judge_label(item.decision)]
    chosen: list[AuditItem] = []

    def take(candidates, reason, count: int) -> None:
        """`reason` is a label, or a function of the item giving one."""
        for item in candidates:
            if count <= 0:
                return
            if not item.reason:
                item.reason = reason(item) if callable(reason) else reason
                chosen.append(item)
                count -= 1

    def closeness(item) -> str:
        return NEAR_THRESHOLD if abs(item.score - filters.tau) <= NEAR_MARGIN else FURTHER

    near = sorted(items, key=lambda item: abs(item.score - filters.tau))
    take([item for item in near if closeness(item) == NEAR_THRESHOLD], NEAR_THRESHOLD, limit * 2 // 5)
    disagreeing = [item for item in items if any((score >= filters.tau) != item.judge_says(filters.tau)
                                                 for _, score in item.others)]
    take(sorted(disagreeing, key=lambda item: -max(abs(item.score - score) for _, score in item.others)),
         DISAGREEMENT, limit * 2 // 5)
    sample = [item for item in items if in_audit_sample(item.inputs_hash)]
    take(sorted(sample, key=lambda item: audit_sample_key(item.inputs_hash)), RANDOM_SAMPLE, limit - len(chosen))
    take(near, closeness, limit - len(chosen))
    return chosen, len(items)


def reviewed_decisions(filters: AuditFilters, limit: int = 25) -> list[AuditItem]:
    """The latest human verdicts, newest first, so a reviewer can see and change them."""
    decisions = JudgeDecision.objects.filter(human_score__isnull=False, kind__in=AUDITED_KINDS).select_related(
        "reviewed_by"
    )
    if filters.kind:
        decisions = decisions.filter(kind=filters.kind)
    if filters.backend:
        decisions = decisions.filter(backend=filters.backend)
    return [_pair_item(decision) for decision in decisions.order_by("-reviewed_at", "-pk")[:limit]]


@dataclass
class JudgeQualityRow:
    backend: str
    model: str
    trust: Trust
    best: Agreement
    sample: Trust  # over the confirmations of the audit's random sample only

    @property
    def agreement(self) -> Agreement:
        return self.trust.agreement


def judge_quality(*, kind: str = "", tau: float = DEFAULT_TAU) -> list[JudgeQualityRow]:
    """Per judge backend and model: agreement with the human-confirmed decisions, the kappa
    interval, the threshold that would agree best, and the same over the random sample only."""
    rows = []
    for (backend, model), pairs in sorted(reviewed_pairs(kind=kind or None).items()):
        scored = [(pair.score, pair.human_score) for pair in pairs]
        sampled = [(pair.score, pair.human_score) for pair in pairs if in_audit_sample(pair.inputs_hash)]
        rows.append(JudgeQualityRow(backend, model, trust(scored, tau), best_threshold(scored, tau),
                                    trust(sampled, tau)))
    return rows
