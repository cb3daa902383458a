"""The Submission's JSON shape (pull API shape), built without serializer overhead."""

from __future__ import annotations

import json
from typing import Any

from rest_framework import serializers

from core.timefmt import iso
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
        body["status"] = submission.status
        body["receivedAt"] = iso(submission.first_received_at)
        body["spam"] = spam_json(submission.spam)
    return body


def spam_json(verdict: dict[str, Any] | None) -> dict[str, Any]:
    """The filter's verdict: its score, its reasons and what matched for each."""
    verdict = verdict or {}
    return {
        "score": verdict.get("score", 0.0),
        "reasons": verdict.get("reasons", []),
        "details": verdict.get("details", {}),
    }


class StoredFileSchema(serializers.Serializer):
    field = serializers.CharField()
    name = serializers.CharField()
    size = serializers.IntegerField()
    contentType = serializers.CharField(help_text="Sniffed from the file's bytes")
    sha256 = serializers.CharField()
    url = serializers.URLField(help_text="A signed link, valid for one hour")


class SubmissionSchema(serializers.Serializer):
    """Documents the shape of ``submission_json`` in the OpenAPI schema."""

    id = serializers.CharField()
    formId = serializers.CharField()
    submittedAt = serializers.DateTimeField()
    fields = serializers.DictField()  # type: ignore[assignment]  # a declared field
    files = StoredFileSchema(many=True, required=False, help_text=(
        "The stored files: present when the form keeps uploads (fileUploads), or still holds "
        "files from when it did"))


class SubmissionMetaSchema(serializers.Serializer):
    ip = serializers.CharField(allow_null=True)
    userAgent = serializers.CharField()
    origin = serializers.CharField()


class SpamVerdictSchema(serializers.Serializer):
    score = serializers.FloatField(min_value=0, max_value=1)
    reasons = serializers.ListField(child=serializers.ChoiceField(
        choices=["blocked_word", "duplicate", "links", "learned"]))
    details = serializers.DictField(child=serializers.CharField(),
                                    help_text="For each reason, what matched.")


class OwnerSubmissionSchema(SubmissionSchema):
    meta = SubmissionMetaSchema()
    status = serializers.ChoiceField(choices=["inbox", "spam"])
    receivedAt = serializers.DateTimeField()
    spam = SpamVerdictSchema()


class SubmissionPageSchema(serializers.Serializer):
    data = OwnerSubmissionSchema(many=True)  # type: ignore[assignment]  # a declared field
    page = serializers.IntegerField()
    limit = serializers.IntegerField()
    total = serializers.IntegerField()
    totalPages = serializers.IntegerField()
