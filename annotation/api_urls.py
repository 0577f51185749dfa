from django.urls import path

from . import api

urlpatterns = [
    path("gold/", api.GoldListCreate.as_view(), name="api-gold-list"),
    path("gold/import/", api.GoldImport.as_view(), name="api-gold-import"),
    path("gold/<int:pk>/", api.GoldDetail.as_view(), name="api-gold-detail"),
    path("gold/quality/", api.GoldQuality.as_view(), name="api-gold-quality"),
    path("gold/checks/<int:pk>/", api.GoldCheckJobDetail.as_view(), name="api-gold-check"),
    path("gold/flags/<int:pk>/dismiss/", api.GoldFlagDismiss.as_view(), name="api-gold-flag-dismiss"),
    path("gold/<int:pk>/reference/", api.GoldSetReference.as_view(), name="api-gold-reference"),
    path("gold/<int:pk>/submit/", api.GoldSubmit.as_view(), name="api-gold-submit"),
    path("gold/<int:pk>/review/", api.GoldReviewCreate.as_view(), name="api-gold-review"),
    path("gold/<int:pk>/steps/", api.GoldStepList.as_view(), name="api-gold-steps"),
    path("gold/<int:pk>/steps/<int:index>/", api.GoldStepDetail.as_view(), name="api-gold-step"),
    path("requirements/<str:benchmark>/<str:task_id>/", api.TaskRequirements.as_view(), name="api-requirements"),
]
