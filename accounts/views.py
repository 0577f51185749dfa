"""Logging in and out, and the user's API tokens page: make a token (its text is shown once) and revoke tokens."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from . import selectors, services
from .forms import ApiTokenForm
from .http import next_url
from .models import ApiToken


class LoginView(auth_views.LoginView):
    def get_redirect_url(self):
        return next_url(self.request, settings.LOGIN_REDIRECT_URL)


class LogoutView(auth_views.LogoutView):
    def get_redirect_url(self):
        return next_url(self.request, settings.LOGOUT_REDIRECT_URL)


NEW_TOKEN_SESSION_KEY = "accounts.new_api_token"


@never_cache  # the page that shows a new token must not be kept by a browser or proxy
@login_required
@require_http_methods(["GET", "POST"])
def api_tokens(request):
    """A new token is handed to the next GET through the session and dropped from it there, so a
    reload neither shows it again nor makes another one."""
    form = ApiTokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            token, text = services.create_api_token(
                request.user, name=form.cleaned_data["name"], expires_in_days=form.cleaned_data["expires_in_days"])
        except services.TokenLimitReached as exc:
            form.add_error(None, str(exc))
        else:
            request.session[NEW_TOKEN_SESSION_KEY] = text
            messages.success(request, f"Token “{token.name}” created. Copy it now: it is not shown again.")
            return redirect("accounts:api-tokens")
    return render(request, "accounts/api_tokens.html", {
        "form": form, "new_token": request.session.pop(NEW_TOKEN_SESSION_KEY, None) if request.method == "GET" else None,
        "tokens": selectors.live_api_tokens(request.user),
    })


@login_required
@require_POST
def revoke_api_token(request, token_key: str):
    try:
        token = services.revoke_api_token(request.user, token_key)
    except ApiToken.DoesNotExist:
        messages.error(request, "No such token among yours (already revoked or expired?).")
    else:
        messages.success(request, f"Token “{token.name}” revoked: it no longer works.")
    return redirect("accounts:api-tokens")
