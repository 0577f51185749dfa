from django.urls import path, re_path
from rest_framework.routers import SimpleRouter

from . import (
    api_comparisons, api_decisions, api_exports, api_leaderboard, api_outcomes, api_scores, api_verdicts, api_views,
)

router = SimpleRouter(use_regex_path=False)
router.register("judge-decisions", api_decisions.JudgeDecisionViewSet, basename="api-judge-decision")

TABLE = r"\.(?P<fmt>csv|json)$"

urlpatterns = [
    path("evaluations/", api_views.EvaluationListCreate.as_view(), name="api-evaluations"),
    path("evaluations/<int:pk>/", api_views.EvaluationDetail.as_view(), name="api-evaluation"),
    path("evaluations/<int:pk>/cancel/", api_views.EvaluationAction.as_view(action="cancel"),
         name="api-evaluation-cancel"),
    path("evaluations/<int:pk>/rerun/", api_views.EvaluationAction.as_view(action="rerun"),
         name="api-evaluation-rerun"),
    path("evaluations/<int:pk>/scores/", api_views.EvaluationScores.as_view(), name="api-evaluation-scores"),
    path("scores/", api_scores.ScoreList.as_view(), name="api-scores"),
    path("runs/<int:pk>/verdicts/", api_verdicts.RunVerdictsView.as_view(), name="api-run-verdicts"),
    path("runs/<int:pk>/agreement/", api_verdicts.VerdictAgreementView.as_view(), name="api-run-agreement"),
    path("runs/<int:pk>/grades/import/", api_verdicts.GradesImportView.as_view(), name="api-run-grades-import"),
    path("trajectories/<int:pk>/grades/", api_verdicts.TrajectoryGradesView.as_view(), name="api-trajectory-grades"),
    path("runs/<int:pk>/judge-outcomes/", api_outcomes.OutcomeJudgingView.as_view(), name="api-judge-outcomes"),
    path("outcome-jobs/<int:pk>/", api_outcomes.OutcomeJobDetail.as_view(), name="api-outcome-job"),
    path("verdicts/judges/", api_verdicts.JudgesVsHumansView.as_view(), name="api-judges-vs-humans"),
    path("outcomes/import/", api_verdicts.OutcomesImportView.as_view(), name="api-outcomes-import"),
    path("verdicts/import/", api_verdicts.VerdictsImportView.as_view(), name="api-verdicts-import"),
    path("aggregates/", api_scores.AggregateList.as_view(), name="api-aggregates"),
    path("leaderboard/", api_leaderboard.LeaderboardView.as_view(), name="api-leaderboard"),
    path("leaderboard/sites/", api_leaderboard.SiteBreakdownView.as_view(), name="api-leaderboard-sites"),
    path("comparisons/", api_comparisons.ComparisonView.as_view(), name="api-comparison"),
    path("comparisons/tasks/<int:task>/", api_comparisons.ComparisonTaskView.as_view(), name="api-comparison-task"),
    path("exports/columns/", api_exports.ExportColumnsView.as_view(), name="api-export-columns"),
    re_path(r"^exports/scores" + TABLE, api_exports.ScoresExport.as_view(), name="api-export-scores"),
    re_path(r"^exports/decisions" + TABLE, api_exports.DecisionsExport.as_view(), name="api-export-decisions"),
    re_path(r"^exports/aggregates" + TABLE, api_exports.AggregatesExport.as_view(), name="api-export-aggregates"),
    re_path(r"^exports/leaderboard" + TABLE, api_exports.LeaderboardExportView.as_view(),
            name="api-export-leaderboard"),
    re_path(r"^exports/judges" + TABLE, api_exports.JudgesExportView.as_view(), name="api-export-judges"),
    re_path(r"^exports/gold\.(?P<fmt>xlsx|csv|json)$", api_exports.GoldExportView.as_view(), name="api-export-gold"),
] + router.urls
