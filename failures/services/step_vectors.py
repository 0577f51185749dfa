"""Steps' sentence vectors for search by meaning: computed once per step by a worker after an import,
never while someone searches."""

import logging

from django.db import transaction
from django.db.models.functions import Substr

from judges.embeddings import sentence_encoder
from trajectories.models import Step

from ..models import StepVector
from ..step_search import quantize

log = logging.getLogger(__name__)
BATCH = 256
TEXT_HEAD = 1000  # characters of each text read; the encoder reads 256 tokens at most


def step_sentence(action: str, value: str, reasoning: str, observation: str) -> str:
    """What a step's vector stands for: what it did, then why, then what it saw."""
    return " ".join(part for part in (action, value, reasoning, observation) if part).strip()


def index_step_vectors(limit: int | None = None) -> int:
    """Vectors for the steps that have none, BATCH at a time, each batch stored in one transaction;
    returns how many were stored."""
    encoder, stored = sentence_encoder(), 0
    while limit is None or stored < limit:
        size = BATCH if limit is None else min(BATCH, limit - stored)
        rows = list(Step.objects.filter(search_vector__isnull=True).order_by("pk")
                    .annotate(reasoning_head=Substr("reasoning", 1, TEXT_HEAD),
                              observation_head=Substr("observation", 1, TEXT_HEAD), action_head=Substr("action", 1, TEXT_HEAD))
                    .values_list("pk", "trajectory_id", "action_head", "action_value", "reasoning_head",
                                 "observation_head")[:size])
        if not rows:
            break
        vectors = quantize(encoder.encode(
            [step_sentence(action, value[:TEXT_HEAD], reasoning, observation)
             for _, _, action, value, reasoning, observation in rows]))
        with transaction.atomic():
            StepVector.objects.bulk_create(
                [StepVector(step_id=pk, trajectory_id=trajectory_id, vector=vector.tobytes())
                 for (pk, trajectory_id, *_), vector in zip(rows, vectors)], ignore_conflicts=True)
        stored += len(rows)
    log.info("stored %s step vectors", stored)
    return stored

