"""Form helpers shared by every app's pages."""


def labelled_errors(form) -> str:
    """A form's errors as one sentence that names each field by its label, as the page shows it."""
    parts = []
    for name, errors in form.errors.items():
        message = " ".join(errors)
        parts.append(f"{form[name].label}: {message}" if name in form.fields else message)
    return "; ".join(parts)


def optional_int(value) -> int | None:
    """A whole number from a form or query string, or None when it is blank or not one."""
    return int(value) if str(value or "").isdigit() else None
