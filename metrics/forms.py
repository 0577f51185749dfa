from django import forms
from django.contrib.auth import get_user_model

from judges.models import JudgeConfig
from metrics.models import GoldPolicy


class EvaluationForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=JudgeConfig.objects.all(), required=False,
                                   empty_label="default judge", to_field_name="name", label="Judge")
    gold_policy = forms.ChoiceField(choices=GoldPolicy.choices, initial=GoldPolicy.APPROVED, label="Gold policy")
    gold_annotator = forms.ModelChoiceField(queryset=get_user_model().objects.filter(gold_trajectories__isnull=False)
                                            .distinct(), required=False, to_field_name="username",
                                            label="Gold annotator")
    tau = forms.FloatField(min_value=0, max_value=1, initial=0.7, label="Threshold τ",
                           help_text="equivalence threshold, 0 to 1")
    window = forms.IntegerField(min_value=1, initial=1, label="Recovery window W", help_text="gold steps")
    ordered = forms.BooleanField(required=False, label="Ordered matching", help_text="ordered step matching")

    def clean(self):
        data = super().clean()
        if data.get("gold_policy") == GoldPolicy.ANNOTATOR and not data.get("gold_annotator"):
            self.add_error("gold_annotator", "Choose the annotator whose gold to use.")
        return data

    def parameters(self) -> dict:
        return {key: self.cleaned_data[key] for key in ("tau", "window", "ordered")}
