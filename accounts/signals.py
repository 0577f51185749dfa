"""Security events in the log (logger `accounts.security`): failed logins and lockouts."""

import logging

from axes.signals import user_locked_out
from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver

log = logging.getLogger("accounts.security")


@receiver(user_login_failed)
def log_failed_login(sender, credentials, request=None, **kwargs):
    address = getattr(request, "axes_ip_address", None)
    log.warning("failed login for %r from %s", credentials.get("username"), address or "unknown address")


@receiver(user_locked_out)
def log_lockout(sender, request, username, ip_address, **kwargs):
    log.warning("login locked out for %r from %s after repeated failures", username, ip_address)
