"""Admin: API tokens (see and revoke; never make one here, its text would have no safe place to show).

Failed logins and lockouts are django-axes' "Access attempts" (delete one, or use its action, to
unlock) and "Access failures" (the log of every failed login)."""

from django.contrib import admin
from knox.models import AuthToken as KnoxAuthToken

from .models import ApiToken

# knox registers its own token model, which ApiToken replaces (KNOX_TOKEN_MODEL): no table behind it.
if admin.site.is_registered(KnoxAuthToken):
    admin.site.unregister(KnoxAuthToken)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "token_key", "created", "expiry", "last_used")
    list_select_related = ("user",)
    search_fields = ("name", "token_key", "user__username")
    list_filter = ("expiry",)
    fields = ("name", "user", "token_key", "created", "expiry", "last_used")
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
