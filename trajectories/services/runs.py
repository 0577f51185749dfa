"""Writes of agent runs: creating them and filling in what the uploaded files say about them."""

from pathlib import Path

from django.db import transaction

from trajectories.formats.canonical import RunInfo, TrajectoryFormatError, run_from_dict
from trajectories.formats.harness import HarnessConfig
from trajectories.formats.values import load_json
from trajectories.formats.text import decode_utf8
from trajectories.models import AgentRun, Paradigm

from .storable import storable_json, storable_text

RUN_DESCRIPTION_FILE = "run.json"


def get_or_create_run(name, *, agent="", model="", paradigm=Paradigm.STEP_BY_STEP, user=None) -> AgentRun:
    """The run called `name`, created when new. An existing run keeps its settings; only its
    blank agent and model are filled in, so a re-import cannot silently relabel a run."""
    name = (name or "").strip()
    if not name:
        raise ValueError("a run needs a name")
    if paradigm not in Paradigm.values:
        raise ValueError(f"unknown paradigm {paradigm!r}; expected one of {', '.join(Paradigm.values)}")
    with transaction.atomic():
        run, created = AgentRun.objects.get_or_create(
            name=name, defaults={"agent": agent, "model": model, "paradigm": paradigm, "uploaded_by": user}
        )
        if not created:
            describe_run(run, RunInfo(agent=agent, model=model))
    return run


def describe_run(run: AgentRun, info: RunInfo) -> bool:
    """Fill the run's fields still at their defaults from a run description; True when it changed.

    Used for `run.json` files and for the `run` object of `trajectory/v1` documents.
    """
    changes = run_changes(run, info)
    for name, value in changes.items():
        setattr(run, name, value)
    if changes:
        run.save(update_fields=[*changes, "updated_at"])
    return bool(changes)


def run_changes(run: AgentRun, info: RunInfo) -> dict:
    """What a run description would fill in (field: value), without writing it: an import may
    store a trajectory later, with others, only if its file changes nothing else."""
    changes = {}
    for name in ("agent", "model"):
        value = storable_text(getattr(info, name).strip())
        if value and not getattr(run, name):
            changes[name] = value
    if info.paradigm != Paradigm.STEP_BY_STEP and run.paradigm == Paradigm.STEP_BY_STEP:
        changes["paradigm"] = info.paradigm
    meta = run.metadata.get("meta", {})
    added = {key: value for key, value in storable_json(info.meta).items() if key not in meta}
    if added:
        changes["metadata"] = {**run.metadata, "meta": {**meta, **added}}
    return changes


def record_harness_config(run: AgentRun, config: HarnessConfig) -> bool:
    """Keep the harness's arguments (model, prompt file, ...) with the run; True when it changed."""
    changed = []
    arguments = storable_json(config.arguments)
    if config.model and not run.model:
        run.model = storable_text(config.model)
        changed.append("model")
    if run.metadata.get("harness_config") != arguments:
        run.metadata = {**run.metadata, "harness_config": arguments}
        changed.append("metadata")
    if changed:
        run.save(update_fields=[*changed, "updated_at"])
    return bool(changed)


def parse_run_description(data: bytes) -> RunInfo:
    return run_from_dict(load_json(decode_utf8(data)[0]))


def read_run_description(folder: Path) -> dict:
    """agent / model / paradigm from a run folder's `run.json` (a `trajectory/v1` run object),
    as keyword arguments for `get_or_create_run`; empty when the folder has none."""
    path = Path(folder) / RUN_DESCRIPTION_FILE
    if not path.is_file():
        return {}
    try:
        info = parse_run_description(path.read_bytes())
    except TrajectoryFormatError as error:
        raise ValueError(f"{path}: {error}") from None
    return {key: value for key, value in (("agent", info.agent), ("model", info.model),
                                          ("paradigm", info.paradigm)) if value}
