from django.urls import path

from . import views

app_name = "judges"

urlpatterns = [
    path("<slug:name>/", views.judge_config_detail, name="config"),
    path("<slug:name>/test/", views.judge_config_test, name="config-test"),
]
