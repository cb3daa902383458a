from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import encode_multipart

from forms_app.services import form_create

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 200
PDF = b"%PDF-1.7\n" + b"x" * 200
HTML = b"<!doctype html><html><script>alert(document.cookie)</script></html>"
BOUNDARY = "BoUnDaRyFf"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"
UPLOADS = {"maxBytes": 1000, "maxFiles": 2, "types": ["image/*", "application/pdf"]}


def upload_form(owner, **uploads):
    return form_create(owner=owner, name="Jobs", rate_limit=10_000, spam_filter=False,
                       file_uploads={**UPLOADS, **uploads})


def body(fields: dict) -> bytes:
    return encode_multipart(BOUNDARY, fields)


def upload(name: str, data: bytes, content_type: str = "image/png") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type)


def post(client, form, fields: dict, **extra):
    return client.post(f"/api/v1/f/{form.slug}", body(fields), content_type=MULTIPART,
                       HTTP_ACCEPT="application/json", **extra)
