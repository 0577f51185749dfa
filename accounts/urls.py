from django.urls import path

from . import views

app_name = "accounts"

urlpatterns = [
    path("tokens/", views.api_tokens, name="api-tokens"),
    path("tokens/<str:token_key>/revoke/", views.revoke_api_token, name="revoke-api-token"),
]
