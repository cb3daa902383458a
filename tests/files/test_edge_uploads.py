"""Uploads through the production web server's edge, over raw sockets: the per-form body
limit, and scripts/hostile.py's upload suite (a polyglot, a zip bomb's name, a traversal name,
cut parts), none of which stores anything unsafe or half a submission."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from files.models import StoredFile
from submissions.models import Submission
from tests.conftest import bearer
from tests.files.helpers import PNG, upload_form
from tests.serving.conftest import request

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import hostile

MIB = 1024 * 1024


def multipart_post(slug: str, data: bytes, pad: int = 0) -> bytes:
    body = hostile.files_body(hostile.file_part("photo", "a.png", data),
                              *([hostile.part("pad", "x" * pad).encode()] if pad else []))
    return request("POST", f"/api/v1/f/{slug}", body, {
        "Content-Type": f"multipart/form-data; boundary={hostile.BOUNDARY}",
        "Accept": "application/json"})


def test_an_upload_form_takes_a_body_past_10_mib(edge, user, store):
    form = upload_form(user, maxBytes=12 * MIB, maxFiles=1)

    answer = edge.exchange(multipart_post(form.slug, PNG + b"\0" * (11 * MIB)))

    assert answer.status == 200, answer.body[:200]
    assert StoredFile.objects.get().size == len(PNG) + 11 * MIB


def test_past_the_forms_own_limit_is_413(edge, user, store):
    form = upload_form(user, maxBytes=1000, maxFiles=1)

    answer = edge.exchange(multipart_post(form.slug, PNG, pad=MIB + 2000))

    assert answer.status == 413
    assert answer.json()["error"] == "payload_too_large"
    assert not Submission.objects.exists() and store.keys() == []


def test_other_bodies_keep_the_10_mib_edge(edge, user):
    body = b'{"name": "' + b"a" * (10 * MIB) + b'"}'
    form = upload_form(user)

    answer = edge.exchange(request("POST", f"/api/v1/f/{form.slug}", body, {
        "Content-Type": "application/json"}))

    assert answer.status == 413
    assert not Submission.objects.exists()


@pytest.fixture
def target(edge, user):
    host, port = edge.address
    return hostile.Target(host, port, bearer(user).split()[1], form_id="")


def test_the_hostile_upload_suite_stores_nothing_unsafe(target, user, store):
    hostile.uploads(target)

    assert target.failures == []
    assert target.server_errors == 0 and target.non_json_errors == 0
    # The traversal upload was stored under the service's own name, then deleted with its
    # form: nothing is left anywhere.
    assert not Submission.objects.exists() and not StoredFile.objects.exists()
    assert store.keys() == []
