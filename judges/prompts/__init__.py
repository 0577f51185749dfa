"""The LLM judge's prompts: one versioned Markdown file per question kind.

Each file opens with `version: N` between `---` lines, then the system message (task
definition, evaluation criteria, evaluation steps, answer format), then a line
`===== INPUT =====` and the user message, a `string.Template` over the question's fields.
The answer format is the line `$answer_format`, filled in from the kind's answer schema
(`judges.schema`), which also reads the answers. The version a decision records is the declared
version plus a hash of the file and of that schema, so an edited prompt or schema is never
mistaken for the one an earlier decision was made with.
"""

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

from .. import schema

PROMPTS_DIR = Path(__file__).parent
INPUT_MARKER = "===== INPUT ====="
ANSWER_FORMAT = "$answer_format"
_FRONT_MATTER = re.compile(r"\A---\n(?P<meta>.*?)\n---\n", re.S)


@dataclass(frozen=True)
class Prompt:
    kind: str
    version: str
    system: str
    user: Template

    def messages(self, **fields) -> list[dict]:
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user.substitute(fields)},
        ]


class PromptFileError(ValueError):
    pass


@cache
def load_prompt(kind: str) -> Prompt:
    path = PROMPTS_DIR / f"{kind}.md"
    if not path.is_file():
        raise PromptFileError(f"{path}: no prompt for question kind {kind!r}")
    text = path.read_text(encoding="utf-8")
    front = _FRONT_MATTER.match(text)
    version = re.search(r"^version:\s*(\S+)\s*$", front.group("meta"), re.M) if front else None
    if not version:
        raise PromptFileError(f"{path}: line 1 must open a `---` block with `version: N`")
    body = text[front.end():]
    if INPUT_MARKER not in body:
        raise PromptFileError(f"{path}: missing the line {INPUT_MARKER}")
    system, user = body.split(INPUT_MARKER, 1)
    if ANSWER_FORMAT not in system:
        raise PromptFileError(f"{path}: the system message must give the answer format as the line {ANSWER_FORMAT}")
    answer_format = schema.reply_format(kind)
    system = Template(system).safe_substitute(answer_format=answer_format)
    digest = hashlib.sha256(f"{text}\n{schema.declaration(kind)}".encode()).hexdigest()[:8]
    return Prompt(kind, f"v{version.group(1)}-{digest}", system.strip(), Template(user.strip()))
