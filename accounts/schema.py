"""The API token in the OpenAPI schema: `Authorization: Token <token>`, as before the tokens were hashed."""

from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme


class ApiTokenScheme(KnoxTokenScheme):
    target_class = "accounts.authentication.TokenAuthentication"
    name = "tokenAuth"
