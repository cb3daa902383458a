"""The Submission's JSON shape (pull API shape), built without serializer overhead."""

from __future__ import annotations

import json
from typing import Any

from rest_framework import serializers

from config.timefmt import iso
from submissions.models import Submission


def field_text(value: Any) -> str:
    """A field's value as plain text, the same wherever it is shown as text (CSV, email,
    Sheets): a list of strings is joined, other structures are JSON."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ", ".join(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def submission_json(
    submission: Submission, only: set[str] | None = None, with_meta: bool = False
) -> dict[str, Any]:
    fields = {name: value for name, value in submission.data if only is None or name in only}
    body: dict[str, Any] = {
        "id": str(submission.pk),
        "formId": str(submission.form_id),
        "submittedAt": iso(submission.submitted_at),
        "fields": fields,
    }
    if with_meta:
        body["meta"] = {
            "ip": submission.ip,
            "userAgent": submission.user_agent,
            "origin": submission.origin,
        }
    return body


class SubmissionSchema(serializers.Serializer):
    """Documents the shape of ``submission_json`` in the OpenAPI schema."""

    id = serializers.CharField()
    formId = serializers.CharField()
    submittedAt = serializers.DateTimeField()
    fields = serializers.DictField()


class SubmissionMetaSchema(serializers.Serializer):
    ip = serializers.CharField(allow_null=True)
    userAgent = serializers.CharField()
    origin = serializers.CharField()


class OwnerSubmissionSchema(SubmissionSchema):
    meta = SubmissionMetaSchema()


class SubmissionPageSchema(serializers.Serializer):
    data = OwnerSubmissionSchema(many=True)
    page = serializers.IntegerField()
    limit = serializers.IntegerField()
    total = serializers.IntegerField()
    totalPages = serializers.IntegerField()
