"""The API's JSON body parser."""

from __future__ import annotations

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class BoundedJSONParser(JSONParser):
    """DRF's parser, with a body nested deeper than Python's stack a 400 like any other
    malformed body, not a RecursionError (a 500). No value may nest 32 levels anyway."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None
