"""The API's JSON body parser (REST_FRAMEWORK's default): every JSON body of every app is read here."""

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from trajectories.formats.text import storable


class JSONParser(parsers.JSONParser):
    """Bodies nested beyond what the decoder's stack allows are a parse error (400), not a 500; NUL and lone
    surrogates (`"\\u0000"`, `"\\ud800"`), which no database holds, become U+FFFD."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
            return storable(data)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
