from __future__ import annotations

import json
import uuid
from typing import cast

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.schema import error
from core.errors import ServiceError
from core.infra import ratelimit, redis
from files.selectors import add_files, texts_with_files
from pullapi import cursors, params, services
from pullapi.authentication import ApiKeyAuthentication
from pullapi.models import ApiKey
from pullapi.selectors import submissions_page
from submissions import export
from submissions.models import Submission
from submissions.representation import SubmissionSchema, submission_json


# Made fresh for every request: raising one shared instance again would grow its traceback.
def submission_not_found() -> ServiceError:
    return ServiceError("not_found", "No such submission, or this key cannot read it.", 404)


def form_not_found() -> ServiceError:
    return ServiceError("form_not_found", "No such form, or this key cannot read it.", 404)


class KeyRateLimited(APIView):
    """Each request made with an API key counts against the key's minute, and every answer
    to it says how much is left, errors included."""

    def count_key_request(self, api_key: ApiKey) -> None:
        limit = settings.PULL_REQUESTS_PER_MINUTE
        self.usage = ratelimit.hit("pull", str(api_key.pk), limit)
        if self.usage.exceeded:
            raise ServiceError(
                "rate_limited",
                f"This key may make {limit} requests a minute.",
                status_code=429,
                headers={"Retry-After": str(self.usage.retry_after)},
            )
        services.api_key_touch(api_key=api_key)

    def finalize_response(self, request: Request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        usage = getattr(self, "usage", None)
        if usage is not None:
            response["X-RateLimit-Limit"] = str(usage.limit)
            response["X-RateLimit-Remaining"] = str(usage.remaining)
            response["X-RateLimit-Reset"] = str(usage.reset_at)
        return response


class PullApiView(KeyRateLimited):
    """Read-only, API-key-only, rate limited per key; sends no CORS headers at all."""

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [IsAuthenticated]
    rate_headers = True  # X-RateLimit-* on every answer (core/api/schema.py documents them)

    @staticmethod
    def api_key(request: Request) -> ApiKey:
        """The key that authenticated the request (ApiKeyAuthentication, IsAuthenticated)."""
        return cast(ApiKey, request.auth)

    def initial(self, request: Request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        self.count_key_request(self.api_key(request))


SubmissionListSchema = inline_serializer(
    "PullSubmissionList",
    {
        "data": SubmissionSchema(many=True),
        "nextCursor": serializers.CharField(allow_null=True),
        "hasMore": serializers.BooleanField(),
    },
)
SubmissionDetailSchema = inline_serializer("PullSubmission", {"data": SubmissionSchema()})


class SubmissionListView(PullApiView):
    @extend_schema(
        operation_id="pull_submissions_list",
        summary="List a form's submissions (pull API)",
        parameters=[params.ListParams],
        responses={200: SubmissionListSchema,
                   404: error("form_not_found: no such form, or this key cannot read it")},
    )
    def get(self, request: Request) -> HttpResponse:
        query = params.validated(params.ListParams, request.query_params)
        found = services.readable_form(api_key=self.api_key(request), identifier=query["formId"])
        if found is None:
            raise form_not_found()
        form_id, with_files = found
        order = query["order"]
        after = None
        if "cursor" in query:
            try:
                after = cursors.decode(query["cursor"], form_id=form_id, order=order)
            except cursors.CursorError as error:
                raise params.invalid_parameter({"cursor": str(error)}) from None
        page = submissions_page(form_id, order=order, limit=query["limit"],
                                since=query.get("since"), after=after, only=query.get("fields"))
        next_cursor = None
        if page.has_more and page.last is not None:
            next_cursor = cursors.encode(form_id=form_id, order=order, position=page.last)
        # The rows come as JSON text; the rest of the body is written around them.
        tail = json.dumps({"nextCursor": next_cursor, "hasMore": page.has_more})
        rows = texts_with_files(page.rows) if page.rows and with_files else page.rows
        body = '{"data":[' + ",".join(rows) + "]," + tail[1:]
        return HttpResponse(body.encode(), content_type="application/json")


class SubmissionDetailView(PullApiView):
    @extend_schema(
        operation_id="pull_submission_read",
        summary="Read one submission (pull API)",
        parameters=[params.DetailParams],
        responses={200: SubmissionDetailSchema},
    )
    def get(self, request: Request, submission_id: str) -> Response:
        query = params.validated(params.DetailParams, request.query_params)
        try:
            ident = uuid.UUID(submission_id)
        except ValueError:
            raise submission_not_found() from None
        submission = Submission.inbox.filter(pk=ident, form__api_keys=self.api_key(request)).first()
        if submission is None:
            raise submission_not_found()
        body = submission_json(submission, only=query.get("fields"))
        return Response({"data": add_files([body], form_id=submission.form_id)[0]})


def stream_in_progress() -> ServiceError:
    return ServiceError(
        "stream_in_progress",
        "This key is already streaming; one stream per key runs at a time.",
        status_code=429,
        headers={"Retry-After": str(STREAM_RETRY_AFTER_SECONDS)},
    )


STREAM_RETRY_AFTER_SECONDS = 5
STREAM_LEASE_SECONDS = 60


class SubmissionStreamView(PullApiView):
    """The bulk sync: every submission of a form as NDJSON, for a first sync."""

    @extend_schema(
        operation_id="pull_submissions_stream",
        summary="Stream every submission of a form as NDJSON (pull API bulk sync)",
        description=(
            "One JSON object a line, in the list's shape, oldest first. Counts as one request; "
            "one stream per key at a time (a second is 429 stream_in_progress)."
        ),
        parameters=[params.StreamParams],
        responses={(200, "application/x-ndjson"): SubmissionSchema,
                   404: error("form_not_found: no such form, or this key cannot read it"),
                   429: error("rate_limited, or stream_in_progress: one stream per key")},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        query = params.validated(params.StreamParams, request.query_params)
        found = services.readable_form(api_key=self.api_key(request), identifier=query["formId"])
        if found is None:
            raise form_not_found()
        form_id, with_files = found
        lease = StreamLease(self.api_key(request).pk)
        if not lease.take():
            raise stream_in_progress()
        try:
            lines = export.ndjson_rows(form_id, since=query.get("since"),
                                       only=query.get("fields"), with_files=with_files)
        except BaseException:
            lease.give_back()
            raise
        response = StreamingHttpResponse(lease.held_while(lines),
                                         content_type="application/x-ndjson")
        return response


class StreamLease:
    """One stream per key: a lease in the shared cache, renewed as batches go out and given
    back when the stream ends; a process that dies holding it loses it within a minute. While
    the cache is away, streams are not limited (a sync must not fail for that)."""

    def __init__(self, key_id) -> None:
        self.name = f"formflow:stream:{key_id}"
        self.token = uuid.uuid4().hex

    def take(self) -> bool:
        return redis.guarded(self._add, True, "stream lease")

    def renew(self) -> None:
        redis.guarded(self._set, None, "stream lease")

    def give_back(self) -> None:
        redis.guarded(self._delete_if_held, None, "stream lease")

    def _add(self) -> bool:
        return cache.add(self.name, self.token, STREAM_LEASE_SECONDS)

    def _set(self) -> None:
        cache.set(self.name, self.token, STREAM_LEASE_SECONDS)

    def _delete_if_held(self) -> None:
        if cache.get(self.name) == self.token:
            cache.delete(self.name)

    def held_while(self, chunks):
        try:
            for chunk in chunks:
                yield chunk
                self.renew()
        finally:
            self.give_back()
