"""Text the readers replaced (NUL, lone surrogates: `trajectories.formats.text`) is reported with the answer
to the request that sent it, whichever importer or API write read it: the API's JSON answer gains
`text_replaced` {count, detail}, a page shows a warning, and both carry a `Text-Replaced` header."""

import json

from django.contrib import messages

from trajectories.formats.text import UNSTORABLE_REPLACED, replacements_counted

HEADER = "Text-Replaced"


class ReportReplacedTextMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with replacements_counted() as replaced:
            response = self.get_response(request)
        if not replaced[0]:
            return response
        response[HEADER] = str(replaced[0])
        if not request.path.startswith("/api/"):
            messages.warning(request, f"{UNSTORABLE_REPLACED} ({replaced[0]}).")
        elif response.get("Content-Type", "").startswith("application/json") and not response.streaming:
            body = json.loads(response.content)
            if isinstance(body, dict):
                body["text_replaced"] = {"count": replaced[0], "detail": UNSTORABLE_REPLACED}
                response.content = json.dumps(body)
        return response
