from django import forms
from django.contrib.auth import get_user_model

from judges.selectors import UnknownJudge, judge_config_required, judge_names
from metrics.models import GoldPolicy


def _judge_choices() -> list[tuple[str, str]]:
    return [("", "default judge")] + [(name, name) for name in judge_names()]


class EvaluationForm(forms.Form):
    judge = forms.ChoiceField(choices=_judge_choices, required=False,
                              help_text="a judge configuration, or a backend by its name")
    gold_policy = forms.ChoiceField(choices=GoldPolicy.choices, initial=GoldPolicy.APPROVED)
    gold_annotator = forms.ModelChoiceField(queryset=get_user_model().objects.filter(gold_trajectories__isnull=False)
                                            .distinct(), required=False, to_field_name="username")
    tau = forms.FloatField(min_value=0, max_value=1, initial=0.7, help_text="equivalence threshold")
    window = forms.IntegerField(min_value=1, initial=1, help_text="recovery window W")
    ordered = forms.BooleanField(required=False, help_text="ordered step matching")

    def clean_judge(self) -> str:
        name = self.cleaned_data.get("judge", "")
        if name:
            try:
                judge_config_required(name)
            except UnknownJudge as exc:
                raise forms.ValidationError(str(exc)) from None
        return name

    def clean(self):
        data = super().clean()
        if data.get("gold_policy") == GoldPolicy.ANNOTATOR and not data.get("gold_annotator"):
            self.add_error("gold_annotator", "Choose the annotator whose gold to use.")
        return data

    def parameters(self) -> dict:
        return {key: self.cleaned_data[key] for key in ("tau", "window", "ordered")}
