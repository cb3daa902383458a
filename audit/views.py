"""``GET /api/v1/audit``: the caller's own log (their forms and their account), newest first,
cursor-paged like the pull API. Read-only: the route answers GET alone, every other method 405."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import selectors
from audit.models import Entry
from core.api import strict
from core.api.query import SinceParam, invalid_parameter, validated
from core.cursors import CursorError
from core.timefmt import iso

ACTION_PATTERN = r"^[a-z][a-z_]*(\.[a-z][a-z_]*)*$"


class AuditParams(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1, max_value=100, default=25)
    cursor = strict.CharField(min_length=1, max_length=4000, required=False,
                              help_text="nextCursor of the previous page")
    since = SinceParam(required=False)
    action = serializers.RegexField(
        ACTION_PATTERN, max_length=64, required=False,
        help_text="An action (form.changed) or a family of them (form)")


class AuditActor(serializers.Serializer):
    _id = serializers.CharField(allow_null=True, help_text="null: the service itself")
    email = serializers.CharField(allow_blank=True)


class AuditTarget(serializers.Serializer):
    type = serializers.CharField()
    _id = serializers.CharField()
    name = serializers.CharField(allow_blank=True)


class AuditEntry(serializers.Serializer):
    _id = serializers.CharField()
    at = serializers.DateTimeField()
    actor = AuditActor()
    action = serializers.CharField()
    target = AuditTarget()
    details = serializers.DictField()


PageSchema = inline_serializer("AuditPage", {
    "data": AuditEntry(many=True),
    "nextCursor": serializers.CharField(allow_null=True),
    "hasMore": serializers.BooleanField(),
})


def entry_json(entry: Entry) -> dict:
    return {
        "_id": str(entry.pk),
        "at": iso(entry.at),
        "actor": {"_id": str(entry.actor_id) if entry.actor_id else None,
                  "email": entry.actor_email},
        "action": entry.action,
        "target": {"type": entry.target_type, "_id": entry.target_id,
                   "name": entry.target_name},
        "details": entry.details,
    }


def answer(request: Request, entries, log: str) -> Response:
    """One page of ``entries`` by the request's parameters; ``log`` binds its cursors to
    this log, so a cursor of another cannot page it."""
    query = validated(AuditParams, request.query_params)
    try:
        found = selectors.page(entries, log=log, limit=query["limit"],
                               cursor=query.get("cursor"), action=query.get("action"),
                               since=query.get("since"))
    except CursorError as error:
        raise invalid_parameter({"cursor": str(error)}) from None
    return Response({"data": [entry_json(entry) for entry in found.entries],
                     "nextCursor": found.next_cursor, "hasMore": found.has_more})


class AuditLogView(APIView):
    http_method_names = ["get", "head", "options"]

    @extend_schema(operation_id="audit_list", summary="The account's audit log, newest first",
                   parameters=[AuditParams], responses={200: PageSchema})
    def get(self, request: Request) -> Response:
        return answer(request, selectors.entries_of(request.user), f"owner:{request.user.pk}")
