"""How much of a request body the server reads before the app decides on it.

Every body is read up to one byte past the largest any view accepts (10 MiB), so an oversized
one is refused as ``413`` by the view's own check. The one exception is a multipart post to a
public form endpoint: a form that takes files accepts up to its ``maxBytes x maxFiles`` plus
1 MiB (files/receiving.py), checked by the endpoint once it knows the form; the server reads
such a body up to the largest any form may allow, into a temporary file, never memory.
"""

from __future__ import annotations

from core.endpoints import is_public


def may_carry_files(method: str, path: str, content_type: str) -> bool:
    return (
        method == "POST"
        and is_public(path)
        and content_type.strip().lower().startswith("multipart/form-data")
    )


def limit_for(method: str, path: str, content_type: str, body_limit: int,
              upload_limit: int) -> int:
    return upload_limit if may_carry_files(method, path, content_type) else body_limit
