from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from accounts.views import LoginView, LogoutView
from trajectories.views import media_file

from . import monitoring, views

handler403 = "infrastructure.errors.permission_denied"
handler404 = "infrastructure.errors.page_not_found"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("metrics", monitoring.metrics_view, name="metrics"),
    path("schemas/trajectory-v1.schema.json", views.trajectory_schema, name="trajectory-schema"),
    path("docs/", views.docs_index, name="docs"),
    path("docs/<slug:slug>/", views.readme_section, name="readme-section"),
    path("accounts/login/", LoginView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("accounts/", include("accounts.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("config.api_urls")),
    path("", include("trajectories.urls")),
    path("annotation/", include("annotation.urls")),
    path("judges/", include("judges.urls")),
    path("failures/", include("failures.urls")),
    path("", include("metrics.urls")),
    # Uploaded files and screenshots, checked against who may see them (never served as static files).
    path(f"{settings.MEDIA_URL.strip('/')}/<path:path>", media_file, name="media"),
]
