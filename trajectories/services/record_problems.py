"""Records of a verdict file that are left out, each named by line, field, value and reason: made,
said and, when a file has nothing else or the import is strict, the reason it is refused."""

from trajectories.formats.published_verdicts import RecordProblem
from trajectories.formats.verdict_files import VerdictFileError, place
from trajectories.formats.wording import count_of

SHOWN_VALUE = 80  # characters of a value's repr kept in a problem
SAID_PROBLEMS = 10  # problems said in one sentence (a refusal, a command's report); the API and page list all


def problem(line: int | str, field: str, value, reason: str) -> RecordProblem:
    return RecordProblem(line, field, repr(value)[:SHOWN_VALUE], reason)


def problem_dict(source: str, item: RecordProblem) -> dict:
    return {"file": source, "line": item.line, "field": item.field, "value": item.value, "reason": item.reason}


def _by_reason(problems: list[RecordProblem]) -> list[str]:
    """One sentence per reason, naming its first records: a file's problems often share one."""
    reasons: dict[str, list[RecordProblem]] = {}
    for item in problems:
        reasons.setdefault(item.reason, []).append(item)
    said = []
    for reason, items in reasons.items():
        more = len(items) - SAID_PROBLEMS
        named = ", ".join(f"{place(item.line)} ({item.field} {item.value})" for item in items[:SAID_PROBLEMS])
        said.append(f"{named}{f' and {more} more' if more > 0 else ''}: {reason}")
    return said


def problems_lines(source: str, problems: list[RecordProblem]) -> list[str]:
    """The report's lines: how many records were left out, then why, naming them."""
    if not problems:
        return []
    return [f"{source}: {count_of(len(problems), 'record')} left out:", *(f"  {line}" for line in _by_reason(problems))]


def refusal(source: str, problems: list[RecordProblem], why: str) -> VerdictFileError:
    """The file refused whole: `why`, then the problems."""
    return VerdictFileError(source, f"{why}: {'; '.join(_by_reason(problems))}")


def refuse_if(source: str, problems: list[RecordProblem], *, stored: int, strict: bool) -> None:
    """Refuse a file none of whose records can be stored, or, when strict, any record of which cannot."""
    if problems and strict:
        raise refusal(source, problems, f"{count_of(len(problems), 'record')} cannot be stored, and a strict import "
                                        "refuses the file")
    if problems and not stored:
        raise refusal(source, problems, "no record can be stored")
