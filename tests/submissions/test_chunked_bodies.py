"""Chunked request bodies, as gunicorn hands them to the WSGI app: de-chunked, with
``Transfer-Encoding: chunked`` and no ``CONTENT_LENGTH``. Each kind of body round-trips
exactly through the real WSGI stack, and one over 10 MiB is 413 with nothing stored.
(scripts/smoke.py sends a chunked submission to a real gunicorn as well.)"""

import io
import json
from wsgiref.util import setup_testing_defaults

import pytest

from submissions.models import Submission

LIMIT = 10 * 1024 * 1024


class Dribble(io.RawIOBase):
    """A stream that gives at most 7 bytes a read, like a slow de-chunking reader."""

    def __init__(self, data: bytes) -> None:
        self.data = io.BytesIO(data)

    def read(self, size=-1):
        return self.data.read(7 if size is None or size < 0 else min(size, 7))


def post_chunked(app, path: str, body: bytes, content_type: str) -> tuple[int, bytes]:
    environ: dict = {}
    setup_testing_defaults(environ)
    environ.update(
        REQUEST_METHOD="POST",
        PATH_INFO=path,
        CONTENT_TYPE=content_type,
        HTTP_TRANSFER_ENCODING="chunked",
        HTTP_ACCEPT="application/json",
        SERVER_NAME="localhost",
        HTTP_HOST="localhost",
    )
    environ.pop("CONTENT_LENGTH", None)
    environ["wsgi.input"] = Dribble(body)
    status: list[str] = []
    chunks = app(environ, lambda line, headers, exc_info=None: status.append(line))
    content = b"".join(chunks)
    getattr(chunks, "close", lambda: None)()
    return int(status[0].split()[0]), content


MULTIPART = (
    b"--b0undary\r\n"
    b'Content-Disposition: form-data; name="name"\r\n\r\nAda\r\n'
    b"--b0undary\r\n"
    b'Content-Disposition: form-data; name="cv"; filename="cv.txt"\r\n'
    b"Content-Type: text/plain\r\n\r\nhello world\r\n"
    b"--b0undary--\r\n"
)


@pytest.mark.parametrize(
    ("body", "content_type", "stored"),
    [
        (
            json.dumps({"name": "Ada", "nested": {"a": [1, 2]}}).encode(),
            "application/json",
            {"name": "Ada", "nested": {"a": [1, 2]}},
        ),
        (b"name=Ada&message=caf%C3%A9", "application/x-www-form-urlencoded",
         {"name": "Ada", "message": "café"}),
        (MULTIPART, "multipart/form-data; boundary=b0undary",
         {"name": "Ada", "cv": "[File: cv.txt, 11 bytes]"}),
    ],
    ids=["json", "urlencoded", "multipart"],
)
def test_a_chunked_body_is_stored_exactly(wsgi, form, body, content_type, stored):
    status, content = post_chunked(wsgi, f"/api/v1/f/{form.slug}", body, content_type)

    assert status == 200, content
    assert Submission.objects.get().fields == stored


def test_a_chunked_body_over_ten_mib_is_413_and_stores_nothing(wsgi, form):
    body = json.dumps({"big": "x" * LIMIT}).encode()

    status, content = post_chunked(wsgi, f"/api/v1/f/{form.slug}", body, "application/json")

    assert status == 413
    assert json.loads(content)["error"] == "payload_too_large"
    assert Submission.objects.count() == 0


def test_a_chunked_body_reaches_the_dashboard_api_too(wsgi, user):
    status, content = post_chunked(
        wsgi, "/api/auth/login",
        json.dumps({"email": user.email, "password": "wrong password"}).encode(),
        "application/json",
    )

    assert status == 401, content  # read and checked, not "no body"
