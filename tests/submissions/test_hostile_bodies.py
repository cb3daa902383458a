"""Bodies no client should send: each is a 4xx in the contract's shape and stores nothing."""

import io
import json

import pytest

from submissions.models import Submission

BOUNDARY = "FormFlowBoundary"


def part(name: str, value: str, filename: str | None = None, boundary: str = BOUNDARY) -> str:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
    return f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n{value}\r\n"


def multipart(parts: list[str], boundary: str = BOUNDARY) -> bytes:
    return ("".join(parts) + f"--{boundary}--\r\n").encode()


def post(client, form, body: bytes, content_type: str):
    return client.post(
        f"/api/v1/f/{form.slug}", data=body, content_type=content_type,
        HTTP_ACCEPT="application/json",
    )


def declared(boundary: str = BOUNDARY) -> str:
    return f"multipart/form-data; boundary={boundary}"


@pytest.mark.parametrize(
    ("body", "content_type", "status", "code"),
    [
        (multipart([part("name", "Ada")]), "multipart/form-data", 400, "malformed_body"),
        (
            multipart([part("name", "Ada", boundary="b" * 300)], "b" * 300),
            declared("b" * 300),
            400,
            "malformed_body",
        ),
        (multipart([part("name", "Ada")]), declared("NotTheOneInTheBody"), 400, "malformed_body"),
        (b"preamble\r\n" + multipart([part("name", "Ada")]), declared(), 400, "malformed_body"),
        # The second part is cut: the body ends without the closing delimiter.
        (
            (part("name", "Ada") + f"--{BOUNDARY}\r\nContent-Disposition: form-da").encode(),
            declared(),
            400,
            "malformed_body",
        ),
        (
            multipart([part(f"f{i}", "x", filename="a.txt") for i in range(1000)]),
            declared(),
            413,
            "too_many_fields",
        ),
        (
            f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"f\"\r\n".encode()
            + b"Content-Type: application/octet-stream\r\n\r\n\xff\xfe\r\n"
            + f"--{BOUNDARY}--\r\n".encode(),
            declared(),
            400,
            "invalid_submission",
        ),
    ],
    ids=["no-boundary", "boundary-300", "other-boundary", "preamble", "cut-part", "1000-files",
         "binary-part-without-filename"],
)
def test_multipart_that_cannot_be_parsed_cleanly_is_refused(
    public, form, body, content_type, status, code
):
    response = post(public, form, body, content_type)

    assert response.status_code == status
    assert response.json()["error"] == code
    assert Submission.objects.count() == 0


def test_as_many_file_parts_as_fields_allowed_are_taken(public, form):
    body = multipart([part(f"f{i}", "x", filename="a.txt") for i in range(150)])

    assert post(public, form, body, declared()).status_code == 200
    assert len(Submission.objects.get().data) == 150


def test_a_text_part_without_a_filename_is_a_field(public, form):
    body = multipart([f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"note\"\r\n"
                      "Content-Type: application/octet-stream\r\n\r\nplain\r\n"])

    assert post(public, form, body, declared()).status_code == 200
    assert Submission.objects.get().data == [["note", "plain"]]


DEEP = "[" * 10_000 + "]" * 10_000


@pytest.mark.parametrize("path", ["/api/auth/signup", "/api/v1/forms"])
def test_json_nested_ten_thousand_deep_is_a_400(owner_api, path):
    response = owner_api.post(path, data=f'{{"name": {DEEP}}}', content_type="application/json")

    assert response.status_code == 400
    assert response.json()["error"] == "malformed_body"


def test_a_cut_off_json_patch_is_a_400(owner_api, form):
    response = owner_api.patch(
        f"/api/v1/forms/{form.pk}", data='{"name":"x","name":[', content_type="application/json"
    )

    assert response.status_code == 400
    assert response.json()["error"] == "malformed_body"
    form.refresh_from_db()
    assert form.name == "Contact"


@pytest.mark.parametrize(
    "since", ["0001-01-01T00:00:00+05:30", "9999-12-31T23:59:59-05:00", "0001-01-01"]
)
def test_since_at_the_edges_of_the_calendar(puller, form, since):
    response = puller.get("/api/v1/submissions", {"since": since, "formId": str(form.pk)})

    assert response.status_code == 200
    assert response.json()["data"] == []


def call_wsgi(
    application, path: str, body: bytes, content_type: str, length: int
) -> tuple[str, dict]:
    """The real WSGI application, as gunicorn calls it, with a body that ends after ``body``
    although ``length`` bytes were announced (the client half-closed)."""
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer["status"], answer["headers"] = status, dict(headers)

    environ = {
        "REQUEST_METHOD": "POST", "PATH_INFO": path, "SERVER_NAME": "localhost",
        "SERVER_PORT": "8000", "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body),
        "CONTENT_TYPE": content_type, "CONTENT_LENGTH": str(length), "HTTP_ACCEPT":
        "application/json", "HTTP_HOST": "localhost", "REMOTE_ADDR": "192.0.2.1",
    }
    content = b"".join(application(environ, start_response))
    return answer["status"], json.loads(content)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'{"name": "Ada", "message": "Hello there"}', "application/json"),
        (b"name=Ada&message=Hello+there", "application/x-www-form-urlencoded"),
        (multipart([part("name", "Ada"), part("message", "Hello there")]), declared()),
    ],
    ids=["json", "urlencoded", "multipart"],
)
def test_a_body_shorter_than_its_content_length_is_a_400(wsgi, form, body, content_type):
    cut = body[: len(body) - 5]

    status, answer = call_wsgi(wsgi, f"/api/v1/f/{form.slug}", cut, content_type, len(body))

    assert status.startswith("400")
    assert answer["error"] == "incomplete_body"
    assert Submission.objects.count() == 0


def test_a_cut_off_body_on_an_api_endpoint_is_a_400(wsgi):
    body = json.dumps({"email": "a@example.com", "password": "correct-horse-battery"}).encode()

    status, answer = call_wsgi(wsgi, "/api/auth/signup", body[:10], "application/json", len(body))

    assert status.startswith("400")
    assert answer["error"] == "incomplete_body"
