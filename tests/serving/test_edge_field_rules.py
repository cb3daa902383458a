"""The production web server's edge reads the body and hands every public submission to
Django's one intake: a form's field rules hold through it exactly as through the app."""

from __future__ import annotations

import json

from forms_app.services import form_create
from submissions.models import Submission
from tests.serving.conftest import request


def post_json(slug: str, fields: dict) -> bytes:
    return request("POST", f"/api/v1/f/{slug}", json.dumps(fields).encode(),
                   {"Content-Type": "application/json"})


def test_the_edge_answers_a_broken_rule_with_the_422_and_stores_nothing(edge, user):
    form = form_create(owner=user, name="Ruled", notify_owner=False, field_rules=[
        {"name": "email", "type": "email", "required": True}])

    refused = edge.exchange(post_json(form.slug, {"email": "nope"}))
    taken = edge.exchange(post_json(form.slug, {"email": "ada@example.com"}))

    assert refused.status == 422
    assert refused.json()["errors"] == [{"field": "email", "code": "TYPE_EMAIL",
                                         "message": "“email” must be a valid email address."}]
    assert taken.status == 200
    assert list(Submission.objects.values_list("data", flat=True)) == [
        [["email", "ada@example.com"]]]
