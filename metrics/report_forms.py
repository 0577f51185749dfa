"""The query-string forms of the leaderboard, comparison and plot pages."""

from django import forms
from django.forms.utils import flatatt
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from failures.selectors import failure_source_choices, failure_type_choices
from metrics import charts, plots
from metrics.aggregation import METRICS
from metrics.selectors import leaderboard
from metrics.selectors.leaderboard import METRIC_LABELS, LeaderboardFilters
from trajectories.models import AgentRun, Paradigm, TaskSubset
from trajectories.verdict_agreement import COMBINED

METRIC_CHOICES = [(metric, METRIC_LABELS[metric]) for metric in METRICS]


class PlainSelect(forms.Select):
    """A select of flat choices written in Python: Django writes each option through a template, which cost the
    leaderboard's filters (a few dozen options) more than its cached tables take to send."""

    def render(self, name, value, attrs=None, renderer=None):
        widget = self.get_context(name, value, attrs)["widget"]
        options = (format_html('\n  <option value="{}"{}>{}</option>', option["value"], flatatt(option["attrs"]),
                               option["label"]) for _, group, _ in widget["optgroups"] for option in group)
        return format_html('<select name="{}"{}>{}\n</select>', widget["name"], flatatt(widget["attrs"]),
                           mark_safe("".join(options)))


class ChoiceField(forms.ChoiceField):
    """A choice the leaderboard's filters offer, as a `PlainSelect`."""

    widget = PlainSelect


def _choices(values, everything: str) -> list[tuple[str, str]]:
    return [("", everything)] + [(value, value) for value in values]


class LeaderboardForm(forms.Form):
    benchmark = ChoiceField(required=False)
    site = ChoiceField(required=False, help_text="Every number restricted to this site group's tasks.")
    paradigm = ChoiceField(required=False, choices=[("", "all paradigms")] + list(Paradigm.choices))
    judge = ChoiceField(required=False, help_text="Latest finished evaluation with this judge.")
    subset = ChoiceField(required=False, help_text="Every number restricted to this task subset's tasks.")
    success_source = ChoiceField(
        required=False, label="Success from",
        help_text="Which verdict the success column is: METRICS.md's (the harness's, else the offline check's), "
                  "the harness's, the offline check's, the human graders' consensus, or a named source's.")
    failure_source = ChoiceField(
        required=False, label="Failure types from",
        help_text="Adds each run's share of attributed failures of each type, by the people's consensus or a source.")
    failure_type = ChoiceField(required=False, label="With failures of type",
                               help_text="Only runs with a failure of this type (by the source chosen, else by some "
                                         "person).")
    sort = forms.CharField(required=False, widget=forms.HiddenInput)
    site_metric = ChoiceField(required=False, choices=METRIC_CHOICES, label="Metric by site")
    distribution = ChoiceField(required=False, label="Distribution of",
                               choices=[(m, METRIC_LABELS[m]) for m in plots.DISTRIBUTION_METRICS])
    kind = ChoiceField(required=False, choices=[(kind, kind) for kind in charts.KINDS])

    DEFAULTS = {"site_metric": "success", "distribution": "step_success", "kind": "box"}

    def __init__(self, data=None):
        if data is not None:  # the chart choices show their defaults when the query has none
            data = data.copy()
            for name, value in self.DEFAULTS.items():
                data.setdefault(name, value)
        super().__init__(data)
        self.fields["benchmark"].choices = _choices(leaderboard.benchmarks(), "all benchmarks")
        self.fields["judge"].choices = _choices(leaderboard.judges(), "any judge")
        self.fields["site"].choices = _choices(leaderboard.site_groups(), "all sites")
        self.fields["subset"].choices = _choices(leaderboard.subsets(), "all tasks")
        # The sources of the chosen benchmark's runs only: another benchmark's would give only dashes.
        self.sources = leaderboard.success_sources((data or {}).get("benchmark", ""))
        self.fields["success_source"].choices = list(self.sources.items())
        self.fields["failure_source"].choices = [("", "not shown"), *failure_source_choices()]
        self.fields["failure_type"].choices = [("", "any"), *failure_type_choices()]

    def clean(self):
        data = super().clean()
        if data.get("site") and data.get("subset"):
            self.add_error("subset", "Choose a site group or a subset, not both.")
        return data

    def _value(self, name: str, default: str = "") -> str:
        return (self.cleaned_data.get(name) if self.is_valid() else "") or default

    def filters(self) -> LeaderboardFilters:
        """Unknown values fall back to the defaults (the form shows why)."""
        sort = self._value("sort", "-success")
        descending, key = sort.startswith("-"), sort.lstrip("-")
        if key not in leaderboard.SORT_KEYS:
            descending, key = True, "success"
        return LeaderboardFilters(
            benchmark=self._value("benchmark"), site=self._value("site"), paradigm=self._value("paradigm"),
            judge=self._value("judge"), sort=key, descending=descending, subset=self._value("subset"),
            success_source=self._value("success_source", COMBINED), failure_source=self._value("failure_source"),
            failure_type=self._value("failure_type"),
        )

    @property
    def chosen_site_metric(self) -> str:
        return self._value("site_metric", self.DEFAULTS["site_metric"])

    @property
    def chosen_distribution(self) -> str:
        return self._value("distribution", self.DEFAULTS["distribution"])

    @property
    def chosen_kind(self) -> str:
        return self._value("kind", self.DEFAULTS["kind"])


class CompareForm(forms.Form):
    baseline = forms.ModelChoiceField(queryset=AgentRun.objects.order_by("name"), to_field_name="name")
    candidate = forms.ModelChoiceField(queryset=AgentRun.objects.order_by("name"), to_field_name="name")
    metric = forms.ChoiceField(required=False, choices=METRIC_CHOICES, label="Tasks that differ most in")
    judge = forms.ChoiceField(required=False)
    subset = forms.ModelChoiceField(queryset=TaskSubset.objects.order_by("name"), to_field_name="name",
                                    required=False, empty_label="all tasks", help_text="Pair only this subset's tasks.")

    def __init__(self, data=None):
        super().__init__(data)
        self.fields["judge"].choices = _choices(leaderboard.judges(), "any judge")

    def clean(self):
        data = super().clean()
        if data.get("baseline") and data.get("baseline") == data.get("candidate"):
            self.add_error("candidate", "Choose a run other than the baseline.")
        return data


class PlotForm(forms.Form):
    benchmark = forms.CharField(required=False)
    site = forms.CharField(required=False)
    paradigm = forms.ChoiceField(required=False, choices=[("", "")] + list(Paradigm.choices))
    judge = forms.CharField(required=False)
    subset = forms.CharField(required=False)
    sort = forms.CharField(required=False)
    metric = forms.CharField(required=False)
    kind = forms.ChoiceField(required=False, choices=[(kind, kind) for kind in charts.KINDS])
    runs = forms.CharField(required=False, help_text="Comma-separated run ids")
    success_source = forms.ChoiceField(required=False)

    def __init__(self, data=None):
        super().__init__(data)
        self.fields["success_source"].choices = list(leaderboard.success_sources().items())

    def clean_runs(self):
        text = self.cleaned_data["runs"].strip()
        try:
            return tuple(int(part) for part in text.split(",") if part.strip())
        except ValueError:
            raise forms.ValidationError("runs must be run ids separated by commas") from None

    def plot_request(self, name: str, fmt: str) -> plots.PlotRequest:
        """Raises ValueError naming the parameter that is wrong."""
        if not self.is_valid():
            field, errors = next(iter(self.errors.items()))
            raise ValueError(f"{field}: {' '.join(errors)}")
        data = self.cleaned_data
        sort = data["sort"] or "-success"
        filters = LeaderboardFilters(benchmark=data["benchmark"], site=data["site"], paradigm=data["paradigm"],
                                     judge=data["judge"], sort=sort.lstrip("-"), descending=sort.startswith("-"),
                                     subset=data["subset"], success_source=data["success_source"] or COMBINED)
        return plots.PlotRequest(name=name, fmt=fmt, filters=filters, metric=data["metric"],
                                 kind=data["kind"] or "box", run_ids=data["runs"])
