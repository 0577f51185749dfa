"""The interface every judge backend implements (Django-free)."""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Protocol

from ..questions import Question
from ..answers import Answer


class EndpointUnreachable(Exception):
    """The judge's endpoint did not answer at all: every further question would fail alike, so the job
    stops at once with this message rather than retrying each question and failing every trajectory."""

    def __init__(self, endpoint: str, reason: str):
        super().__init__(f"the judge's endpoint {endpoint} did not answer: {reason}")


class ModeMemory(Protocol):
    """Where the structured-output mode an endpoint accepted is kept, per endpoint and model."""

    def recall(self, endpoint: str, model: str) -> str | None: ...

    def remember(self, endpoint: str, model: str, mode: str) -> None: ...


@dataclass(frozen=True)
class BackendSpec:
    """Everything a backend needs, taken from a JudgeConfig row or from settings."""

    backend: str
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    temperature: float = 0.0
    options: dict = field(default_factory=dict)
    mode_memory: ModeMemory | None = field(default=None, compare=False)


class Backend(ABC):
    name: str

    def __init__(self, spec: BackendSpec):
        self.spec = spec

    @property
    def model(self) -> str:
        return self.spec.model

    @property
    def sees_screenshots(self) -> bool:
        """Whether the metrics may ask it about screenshots (`judges.elements`)."""
        return False

    @abstractmethod
    def version(self, kind: str) -> str:
        """The prompt or rule version a decision of this kind is made with (part of its cache key)."""

    @abstractmethod
    def answer(self, questions: list[Question]) -> list[Answer]:
        """One answer per question, in order; a failure is an answer with `error`, not an exception."""
