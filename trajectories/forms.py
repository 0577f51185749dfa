from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat

from .models import AgentRun, OutcomeStatus, Paradigm
from .selectors import TrajectoryFilters
from .services.verdict_import import NewRun

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
        widget=MultipleFileInput(attrs={"accept": ".csv,.json,.jsonl,.zip"}),
        help_text="human_label.json, WebJudge outputs, result.json with a judge, Agent-E records, AgentRewardBench "
                  "annotations.csv or judge files (a zip of many is one file), or a per-task table of outcomes or "
                  "grades. The next step shows what each file holds and where its verdicts go.")
    run = forms.CharField(max_length=200, required=False,
                          help_text="The run judged (WebJudge, browser-use judge and Agent-E files name none; grades "
                                    "need it); for human_label.json, one agent's column.")
    source = forms.CharField(max_length=200, required=False,
                             help_text='Name of the verdict source, e.g. "WebJudge o4-mini"; '
                                       "default: the format's own.")
    benchmark = forms.CharField(max_length=64, required=False,
                                help_text="When the file does not say; tasks a file names are made only in a "
                                          "benchmark named here or by the file.")
    threshold = forms.FloatField(required=False, help_text="Score at or above which a judge's score is a success "
                                                           "(browser-use: 50).")
    strict = forms.BooleanField(required=False, help_text="Refuse a file with any record that cannot be stored (a "
                                                          "task the platform does not hold among them) instead of "
                                                          "leaving the record out.")

    def clean_files(self):
        files = self.cleaned_data["files"]
        check_upload_size(files)
        return files


class AgentRunForm(forms.Form):
    """Where the verdicts of one agent of a file go: an existing run, a new run, or nowhere."""

    RUN, NEW, SKIP = "run", "new", "skip"
    choice = forms.ChoiceField(label="Its verdicts go to", widget=forms.RadioSelect, choices=[
        (RUN, "an existing run"), (NEW, "a new run"), (SKIP, "nowhere: leave them out")])
    run = forms.CharField(max_length=AgentRun._meta.get_field("name").max_length, required=False, label="Run name",
                          widget=forms.TextInput(attrs={"list": "run-names", "autocomplete": "off"}))
    new = forms.CharField(max_length=AgentRun._meta.get_field("name").max_length, required=False,
                          label="New run name")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, label_suffix="", **kwargs)

    @classmethod
    def initial_of(cls, look) -> dict:
        """The choice automatic matching makes for an agent (`AgentLook`)."""
        if look.match is not None:
            return {"choice": cls.RUN, "run": look.match.run, "new": ""}
        if look.run:
            return {"choice": cls.NEW, "run": "", "new": look.run}
        return {"choice": cls.RUN, "run": "", "new": ""}

    def clean(self):
        data = super().clean()
        for choice, name, missing in ((self.RUN, "run", "Name the run."), (self.NEW, "new", "Name the new run.")):
            if data.get("choice") == choice and not data.get(name, "").strip():
                self.add_error(name, missing)
        return data

    @property
    def mapped(self):
        """The mapping's value for the agent: a run's name, a NewRun, or None (left out)."""
        data = self.cleaned_data
        if data["choice"] == self.SKIP:
            return None
        return data["run"].strip() if data["choice"] == self.RUN else NewRun(data["new"].strip())
