from django import forms
from django.conf import settings


class ApiTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="To recognise the token later, e.g. “CI uploads”.",
                           error_messages={"required": "Give the token a name, to recognise it later."})
    expires_in_days = forms.IntegerField(
        label="Expires in (days)", min_value=1, max_value=settings.API_TOKEN_MAX_TTL_DAYS,
        initial=settings.API_TOKEN_TTL_DAYS,
    )
