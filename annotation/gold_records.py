"""What a gold file holds once read, whatever its format: blocks of gold steps and the rows that could not be
placed. Django-free; the readers (`formats`, `mind2web`) build these and the import services store them."""

from dataclasses import dataclass, field


class GoldFormatError(ValueError):
    """A file that cannot be read as gold at all; `where` names the file and row or field."""

    def __init__(self, message: str, where: str = ""):
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


@dataclass
class GoldStepRecord:
    text: str
    label: str = ""
    action_type: str = ""
    element_role: str = ""
    element_name: str = ""
    value: str = ""


@dataclass
class GoldBlock:
    """One gold trajectory as written in a file."""

    task_id: str
    benchmark: str = "webarena"
    ordinal: int = 1  # 1 for the task's first block in the file, 2 for its second, ...
    where: str = ""
    steps: list[GoldStepRecord] = field(default_factory=list)
    cannot_complete: bool = False
    cannot_complete_reason: str = ""
    final_answer: str = ""
    annotator: str = ""
    status: str = ""
    rows: list[str] = field(default_factory=list)  # where each step came from


@dataclass
class UnplacedRow:
    where: str
    reason: str


@dataclass
class GoldFile:
    format: str
    blocks: list[GoldBlock] = field(default_factory=list)
    unplaced: list[UnplacedRow] = field(default_factory=list)
    anomalies: list = field(default_factory=list)  # `formats.GoldAnomaly`: odd numbering read as meant
    tasks: list = field(default_factory=list)  # TaskConfigs a file defines along with its gold (Mind2Web)
