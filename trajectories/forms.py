from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat

from .models import OutcomeStatus, Paradigm
from .selectors import TrajectoryFilters

ACCEPTED_FILES = ".html,.htm,.json,.jsonl,.zip,.log,.txt"


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    widget = MultipleFileInput

    def clean(self, data, initial=None):
        files = data if isinstance(data, (list, tuple)) else [data] if data else []
        if not files and self.required:
            raise forms.ValidationError(self.error_messages["required"], code="required")
        return [super(MultipleFileField, self).clean(item, initial) for item in files]


def check_upload_size(files) -> None:
    total = sum(item.size for item in files)
    if total > settings.INGEST_MAX_UPLOAD_BYTES:
        raise forms.ValidationError(
            f"The upload is {filesizeformat(total)}; the limit is {filesizeformat(settings.INGEST_MAX_UPLOAD_BYTES)}."
        )


class UploadForm(forms.Form):
    run = forms.CharField(max_length=200, help_text="An existing run of yours, or a new name.",
                          widget=forms.TextInput(attrs={"list": "run-names", "autocomplete": "off"}))
    agent = forms.CharField(max_length=200, required=False)
    model = forms.CharField(max_length=200, required=False)
    paradigm = forms.ChoiceField(choices=Paradigm.choices, initial=Paradigm.STEP_BY_STEP)
    replace = forms.BooleanField(
        required=False, help_text="Replace the run's trajectory for a task when a file holds a different one."
    )
    files = MultipleFileField(
        widget=MultipleFileInput(attrs={"accept": ACCEPTED_FILES}),
        help_text="render_<id>.html, trajectory JSON or JSONL, html2json output, harness logs and config.json; "
        "zip a folder to upload it whole.",
    )

    def clean_files(self):
        files = self.cleaned_data["files"]
        check_upload_size(files)
        return files


class TrajectoryFilterForm(forms.Form):
    outcome = forms.ChoiceField(choices=[("", "any outcome"), *OutcomeStatus.choices], required=False)
    site = forms.ChoiceField(choices=[("", "any site")], required=False)
    success = forms.ChoiceField(
        choices=[("", "any result"), ("pass", "PASS"), ("fail", "FAIL"), ("unknown", "unknown")], required=False,
        label="Harness verdict",
    )
    q = forms.CharField(required=False, label="Task or intent")

    def __init__(self, *args, sites=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["site"].choices = [("", "any site"), *((site, site) for site in sites)]

    def filters(self) -> TrajectoryFilters:
        """The valid filters; an invalid one (e.g. a site this run does not have) is left out."""
        self.is_valid()
        data = self.cleaned_data
        return TrajectoryFilters(outcome=data.get("outcome", ""), site=data.get("site", ""),
                                 success=data.get("success", ""), search=data.get("q", "").strip())


MAX_TASK_FILE_BYTES = 50 * 1024 * 1024


class TaskImportForm(forms.Form):
    """A task file (WebArena, WebArena-Lite, WebArena-Verified, Mind2Web-Live), or an id list defining a subset."""

    file = forms.FileField(help_text="JSON task file; for a subset, a JSON list of task ids or one id per line.")
    subset = forms.CharField(required=False, max_length=64,
                             help_text="Fill in to define a subset of this name from a file of task ids instead.")
    subset_benchmark = forms.CharField(required=False, initial="webarena", max_length=64,
                                       label="Subset of benchmark")
    benchmark = forms.CharField(required=False, max_length=64,
                                help_text="Task files: store under this benchmark instead of the file's own.")
    strict = forms.BooleanField(required=False, label="Strict",
                                help_text="Refuse the whole file when an entry cannot be read or is read other than "
                                          "as written, instead of skipping or reading it as meant.")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_TASK_FILE_BYTES:
            raise forms.ValidationError(f"{upload.name}: larger than {filesizeformat(MAX_TASK_FILE_BYTES)}")
        return upload


class OutcomesUploadForm(forms.Form):
    """A file of per-task pass/fail verdicts, read as `manage.py import_outcomes` reads it."""

    file = forms.FileField(widget=forms.ClearableFileInput(attrs={"accept": ".csv,.json,.jsonl"}),
                           help_text="CSV, JSON or JSONL: one row per run and task.")
    run = forms.CharField(max_length=200, required=False,
                          help_text="The run's name when the file has no run column; with one, only this run is read.")
    run_column = forms.CharField(max_length=100, required=False, help_text="Default: run, m, agent, model.")
    task_column = forms.CharField(max_length=100, required=False, help_text="Default: task_id, task, t, id.")
    success_column = forms.CharField(max_length=100, required=False, help_text="Default: success, s, pass, result.")
    benchmark = forms.CharField(max_length=64, initial="webarena")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        check_upload_size([upload])
        return upload


class VerdictsUploadForm(forms.Form):
    """Files of verdicts from any source, read as `manage.py import_verdicts` reads them."""

    files = MultipleFileField(
        widget=MultipleFileInput(attrs={"accept": ".csv,.json,.jsonl"}),
        help_text="human_label.json, WebJudge outputs, result.json with a judge, Agent-E records, AgentRewardBench "
                  "annotations.csv or judge files, or a per-task table of outcomes or grades. Each file is stored "
                  "whole or not at all.")
    run = forms.CharField(max_length=200, required=False,
                          help_text="The run judged (needed for WebJudge, browser-use judge and Agent-E files and for "
                                    "grades); for human_label.json, one agent's column.")
    source = forms.CharField(max_length=200, required=False,
                             help_text='Name of the verdict source, e.g. "WebJudge o4-mini"; '
                                       "default: the format's own.")
    benchmark = forms.CharField(max_length=64, required=False, help_text="When the file does not say.")
    threshold = forms.FloatField(required=False, help_text="Score at or above which a judge's score is a success "
                                                           "(browser-use: 70).")
    strict = forms.BooleanField(required=False, help_text="Refuse verdicts on tasks the platform does not hold "
                                                          "instead of creating them.")

    def clean_files(self):
        files = self.cleaned_data["files"]
        check_upload_size(files)
        return files
