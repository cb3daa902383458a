"""``GET /api/v1/files/{id}?sig=...``: a stored file, for whoever holds a signed link.

No cookie is read or set: the link is the credential. The file is always an attachment, with
the type sniffed from its bytes, ``nosniff`` and a CSP that sandboxes it, so an HTML page sent
as a picture can never run as this origin's page. A wrong, altered or expired signature is
``404``, exactly as a missing file is. Files are decrypted as they stream (files/sealing.py);
one that fails to authenticate is refused, never served.
"""

from __future__ import annotations

import logging
import re
import uuid

from django.http import FileResponse, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from core.errors import default_error, json_error
from files import links, sealing
from files.models import StoredFile
from files.services import storage, storage_unavailable

logger = logging.getLogger(__name__)

SANDBOX = "default-src 'none'; sandbox"
UNSAFE_IN_NAME = re.compile(r"[\x00-\x1f\x7f/\\]")


def safe_filename(name: str) -> str:
    """The client's name, without control characters or path separators; Django's
    Content-Disposition writes a non-ASCII one as RFC 5987's ``filename*``."""
    cleaned = UNSAFE_IN_NAME.sub("_", name).strip(" .") or "file"
    return cleaned[:200]


class FileStream(FileResponse):
    # A sealed chunk a read: fewer, larger writes than FileResponse's 4 KiB.
    block_size = sealing.CHUNK_BYTES


def _not_found() -> HttpResponse:
    return json_error(404, *default_error(404))


def _unavailable() -> HttpResponse:
    error = storage_unavailable()
    answer = json_error(error.status_code, error.code, error.message)
    for name, value in error.headers.items():
        answer[name] = value
    return answer


@csrf_exempt
def download(request: HttpRequest, file_id: str) -> HttpResponseBase:
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
        handle = sealing.opened(storage().open(row.key, "rb"), sha256=row.sha256)
    except FileNotFoundError:
        return _not_found()
    except sealing.Unreadable as error:
        # Changed at rest, or its key was dropped: refused, never served; the operator is told.
        logger.error("Refused stored file %s: %s", row.pk, error)
        return _not_found()
    except Exception as error:  # the store did not answer (a disk error, S3 unreachable)
        logger.warning("Could not read stored file %s: %r", row.pk, error)
        return _unavailable()
    answer = FileStream(handle, as_attachment=True, filename=safe_filename(row.name),
                        content_type=row.content_type)
    answer["Content-Length"] = str(row.size)
    answer["X-Content-Type-Options"] = "nosniff"
    answer["Content-Security-Policy"] = SANDBOX
    answer["Cache-Control"] = "private, no-store"
    answer["Cross-Origin-Resource-Policy"] = "same-origin"
    return answer


class FileDownloadView(APIView):
    """Describes the download in the OpenAPI schema; requests go straight to ``download``
    (no DRF machinery, no authentication: the signed link is the credential)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    def dispatch(self, request: HttpRequest, file_id: str) -> HttpResponseBase:
        return download(request, file_id)

    @extend_schema(
        operation_id="file_download",
        summary="Download an uploaded file through a signed link",
        description=(
            "The `url` of a submission's `files` entry: valid for one hour. Always an "
            "attachment, with the type sniffed from the file's bytes, `nosniff` and a "
            "sandboxing Content-Security-Policy. A wrong, altered or expired signature, or a "
            "deleted file, is 404."
        ),
        parameters=[OpenApiParameter("sig", str, OpenApiParameter.QUERY, required=True,
                                     description="The link's signature: expiry and MAC")],
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY,
                   404: OpenApiResponse(description="No such file, or a bad or expired link")},
        auth=[],
    )
    def get(self, request: Request, file_id: str) -> HttpResponseBase:
        return download(request._request, file_id)  # only reached through DRF's own dispatch
