"""``GET /api/v1/files/{id}?sig=...``: a stored file, for whoever holds a signed link.

No cookie is read or set: the link is the credential. The file is always an attachment, with
the type sniffed from its bytes, ``nosniff`` and a CSP that sandboxes it, so an HTML page sent
as a picture can never run as this origin's page. A wrong, altered or expired signature is
``404``, exactly as a missing file is.
"""

from __future__ import annotations

import re
import uuid

from django.http import FileResponse, HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from config.errors import default_error, json_error
from files import links
from files.models import StoredFile
from files.services import storage

SANDBOX = "default-src 'none'; sandbox"
UNSAFE_IN_NAME = re.compile(r"[\x00-\x1f\x7f/\\]")


def safe_filename(name: str) -> str:
    """The client's name, without control characters or path separators; Django's
    Content-Disposition writes a non-ASCII one as RFC 5987's ``filename*``."""
    cleaned = UNSAFE_IN_NAME.sub("_", name).strip(" .") or "file"
    return cleaned[:200]


def _not_found() -> HttpResponse:
    return json_error(404, *default_error(404))


@csrf_exempt
def download(request: HttpRequest, file_id: str) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        response = json_error(405, *default_error(405))
        response["Allow"] = "GET, HEAD"
        return response
    try:
        ident = uuid.UUID(file_id)
    except ValueError:
        return _not_found()
    if not links.valid(ident, request.GET.get("sig", "")):
        return _not_found()
    row = StoredFile.objects.filter(pk=ident).first()
    if row is None:
        return _not_found()
    try:
        handle = storage().open(row.key, "rb")
    except (FileNotFoundError, OSError):
        return _not_found()
    response = FileResponse(handle, as_attachment=True, filename=safe_filename(row.name),
                            content_type=row.content_type)
    response["Content-Length"] = str(row.size)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = SANDBOX
    response["Cache-Control"] = "private, no-store"
    response["Cross-Origin-Resource-Policy"] = "same-origin"
    return response
