"""A judge configuration's page: what it is, and the last test of its endpoint, which admins run again."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from accounts.roles import ADMIN, has_role

from .endpoint_checks import run_endpoint_test
from .models import JudgeConfig


@login_required
def judge_config_detail(request, name: str):
    config = get_object_or_404(JudgeConfig, name=name)
    return render(request, "judges/judge_config.html", {
        "config": config, "report": config.last_test or None, "can_test": has_role(request.user, ADMIN),
    })


@login_required
@require_POST
def judge_config_test(request, name: str):
    config = get_object_or_404(JudgeConfig, name=name)
    if not has_role(request.user, ADMIN):
        raise PermissionDenied("only admins may test a judge's endpoint")
    run_endpoint_test(config)
    return redirect("judges:config", name=config.name)
