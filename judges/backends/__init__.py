"""Judge backends, registered by the name a JudgeConfig gives."""

from .base import Backend, BackendSpec
from .exact import ExactBackend
from .llm import OpenAIBackend
from .offline import OfflineBackend

BACKENDS: dict[str, type[Backend]] = {
    ExactBackend.name: ExactBackend,
    OfflineBackend.name: OfflineBackend,
    OpenAIBackend.name: OpenAIBackend,
}


def make_backend(spec: BackendSpec) -> Backend:
    try:
        backend_class = BACKENDS[spec.backend]
    except KeyError:
        raise ValueError(f"unknown judge backend {spec.backend!r}; known: {', '.join(sorted(BACKENDS))}") from None
    return backend_class(spec)
