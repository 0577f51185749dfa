from django import forms
from django.contrib.auth import get_user_model

from judges.calibration import DEFAULT_THRESHOLD, parse_threshold
from judges.endpoint_checks import why_not_choosable
from judges.outcome_judging import outcome_judges
from judges.selectors import UnknownJudge, judge_config_named, judge_config_required, judge_names
from metrics.models import GoldPolicy, parse_gold_policy
from metrics.permissions import may_use_gold_policy


def _judge_choices() -> list[tuple[str, str]]:
    return [("", "default judge")] + [(name, name) for name in judge_names()]


class JudgeSelect(forms.Select):
    """Every judge, those no job may start on yet disabled; the form lists why (`JudgeChoice`)."""

    refused: dict[str, str] = {}

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if str(value) in self.refused:
            option["attrs"]["disabled"] = True
            option["label"] = f"{label} (not available yet: see below)"
        return option


class JudgeChoice:
    """A form with a `judge` field of LLM judges that may not be chosen until their endpoint answered a test."""

    def refuse_judges(self, configs) -> None:
        self.judges_not_offered = [(config, str(refusal)) for config in configs
                                   for refusal in [why_not_choosable(config)] if refusal]
        self.fields["judge"].widget.refused = {config.name: reason for config, reason in self.judges_not_offered}

    def check_judge(self, config):
        refusal = why_not_choosable(config)
        if refusal is not None:
            raise forms.ValidationError(str(refusal), code=refusal.code)
        return config


class ThresholdField(forms.CharField):
    """τ, read by the same rule as on every page (`parse_threshold`); a text input, so that what was
    typed stays in the field beside its error."""

    widget = forms.TextInput(attrs={"inputmode": "decimal", "size": 6})

    def to_python(self, value):
        text = super().to_python(value)
        if text in self.empty_values:
            return None
        try:
            return parse_threshold(text)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None


class EvaluationForm(JudgeChoice, forms.Form):
    """Offers `user` only the gold policies they may use (`may_use_gold_policy`), and only the judges
    a job may start on."""

    judge = forms.ChoiceField(choices=_judge_choices, required=False, label="Judge", widget=JudgeSelect,
                              help_text="a judge configuration, or a backend by its name")
    # A text field shown as a choice, so that the older spelling 'approved' is still accepted.
    gold_policy = forms.CharField(widget=forms.Select(choices=GoldPolicy.choices), initial=GoldPolicy.REFERENCE,
                                  label="Gold policy")
    gold_annotator = forms.ModelChoiceField(queryset=get_user_model().objects.filter(gold_trajectories__isnull=False)
                                            .distinct(), required=False, to_field_name="username",
                                            label="Gold annotator")
    tau = ThresholdField(initial=DEFAULT_THRESHOLD, label="Threshold τ", help_text="equivalence threshold, 0 to 1")
    window = forms.IntegerField(min_value=1, initial=1, label="Recovery window W", help_text="gold steps")
    ordered = forms.BooleanField(required=False, label="Ordered matching", help_text="ordered step matching")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.refuse_judges(judge_config_named(name) for name in judge_names())
        policies = [(value, label) for value, label in GoldPolicy.choices if may_use_gold_policy(user, value)]
        # Only offered: a forged choice is refused by the service (`create_evaluation`).
        self.fields["gold_policy"].widget.choices = policies
        if len(policies) == 1:
            self.fields["gold_policy"].help_text = "other gold policies need the reviewer role"
            self.fields["gold_annotator"].widget = forms.HiddenInput()

    def clean_gold_policy(self) -> str:
        try:
            policy, name = parse_gold_policy(self.cleaned_data["gold_policy"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        if name:
            raise forms.ValidationError("choose the annotator in the annotator field")
        return policy

    def clean_judge(self) -> str:
        name = self.cleaned_data.get("judge", "")
        if name:
            try:
                self.check_judge(judge_config_required(name))
            except UnknownJudge as exc:
                raise forms.ValidationError(str(exc)) from None
        return name

    def clean(self):
        data = super().clean()
        if data.get("gold_policy") == GoldPolicy.ANNOTATOR and not data.get("gold_annotator"):
            self.add_error("gold_annotator", "Choose the annotator whose gold to use.")
        elif data.get("gold_policy") and data.get("gold_annotator"):
            self.add_error("gold_annotator", "An annotator is chosen only with the 'annotator' gold policy.")
        return data

    def parameters(self) -> dict:
        return {key: self.cleaned_data[key] for key in ("tau", "window", "ordered")}


class OutcomeJudgeForm(JudgeChoice, forms.Form):
    """The judge configuration to judge a run's outcomes with: only those of the openai backend can,
    once their endpoint answered a test."""

    judge = forms.ModelChoiceField(queryset=outcome_judges(), to_field_name="name", empty_label=None, label="Judge",
                                   help_text="an OpenAI-compatible judge configuration", widget=JudgeSelect)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.refuse_judges(self.fields["judge"].queryset)

    def clean_judge(self):
        return self.check_judge(self.cleaned_data["judge"])
