"""The rows of the verdict sources every run has without importing them: the harness, the offline
check, the human graders, and the platform's LLM judge under each judge configuration."""

from trajectories.models import VerdictKind, VerdictSource

HARNESS_SOURCE = (VerdictKind.HARNESS, "harness", "")
CHECK_SOURCE = (VerdictKind.RULE_CHECK, "offline check", "")
HUMAN_GRADERS_SOURCE = (VerdictKind.HUMAN, "human graders", "")


def judge_source_key(config_name: str, model: str) -> tuple[str, str, str]:
    return VerdictKind.LLM_JUDGE, f"LLM judge {config_name}", model


def built_in_sources(keys) -> dict[tuple[str, str, str], VerdictSource]:
    """{(kind, name, model): its row} for the keys given; a judge configured after the sources were
    set up gets its row here, the first time its verdicts are read."""
    keys = set(keys)
    if not keys:
        return {}
    found = {(source.kind, source.name, source.model): source for source in VerdictSource.objects.filter(
        name__in={name for _, name, _ in keys}, screenshot_threshold__isnull=True)}
    for kind, name, model in keys - set(found):
        found[(kind, name, model)], _ = VerdictSource.objects.get_or_create(kind=kind, name=name, model=model,
                                                                            screenshot_threshold=None)
    return {key: found[key] for key in keys}
