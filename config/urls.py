from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.static import serve

from . import views

handler403 = "config.errors.permission_denied"
handler404 = "config.errors.page_not_found"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("schemas/trajectory-v1.schema.json", views.trajectory_schema, name="trajectory-schema"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/", include("config.api_urls")),
    path("", include("trajectories.urls")),
    path("annotation/", include("annotation.urls")),
    path("judges/", include("judges.urls")),
    path("", include("metrics.urls")),
]

if settings.DEBUG:
    urlpatterns += [path(f"{settings.MEDIA_URL.strip('/')}/<path:path>", serve, {"document_root": settings.MEDIA_ROOT})]
