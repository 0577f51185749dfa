"""Why a gold write was refused; views and the API turn these into messages and status codes."""


class GoldError(Exception):
    """Base of every refused gold write."""


class GoldPermissionDenied(GoldError):
    pass


class GoldWorkflowError(GoldError):
    """The action does not fit the gold trajectory's status (e.g. approving a draft)."""


class TaskWithoutText(GoldError):
    """Approving gold for a task with no text: nobody could have checked the gold against what it asks."""


class GoldValidationError(GoldError):
    """Bad content; `errors` maps a field path (`steps[2].text`) to its message."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{path}: {message}" for path, message in errors.items()))


class GoldConflict(GoldError):
    """Someone saved since the caller loaded: `current` is the stored gold trajectory as it is now."""

    def __init__(self, current, message: str = ""):
        self.current = current
        super().__init__(
            message
            or f"gold trajectory {current.pk} was saved by someone else in the meantime (now version {current.version})"
        )


class RequirementsConflict(GoldError):
    """The task's requirements changed since the caller loaded them; `current` is the stored list."""

    def __init__(self, current: list[str]):
        self.current = current
        super().__init__("the requirements were changed by someone else in the meantime")
