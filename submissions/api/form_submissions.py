"""The owner's submission API: a form's folders, one submission's moves, and the export. Its
paths sit under the form's (``/api/v1/forms/{id}/submissions...``); a submission's deliveries
are integrations' (integrations/views.py), on the same footing (``UnderForm``)."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.generics import get_object_or_404
from rest_framework.metadata import SimpleMetadata
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import signed_in
from core.api.schema import ROLE_TOO_LOW, error
from files.selectors import add_files
from forms_app import access
from forms_app.models import Form
from forms_app.selectors import forms_of
from submissions import export
from submissions.models import Status, Submission
from submissions.representation import (
    OwnerSubmissionSchema,
    SubmissionPageSchema,
    submission_json,
)
from submissions.selectors import submissions_page
from submissions.services import (
    submission_delete,
    submission_mark_spam,
    submission_rescue,
    submissions_exported,
)
from teams.roles import Role


class PageParams(serializers.Serializer):
    page = serializers.IntegerField(min_value=1, default=1)
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    status = serializers.ChoiceField(choices=Status.values, default=Status.INBOX,
                                     help_text="The folder: inbox (default) or spam.")


class ExportParams(serializers.Serializer):
    format = serializers.ChoiceField(choices=["csv", "json"])


def query_params(serializer_class, request: Request) -> dict:
    # A plain dict: with the QueryDict DRF takes "status=" for "no status" and uses the
    # default, where the schema (and the client) sent an empty, invalid value.
    serializer = serializer_class(data=request.query_params.dict())
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


# Only routes under a form's detail path, for the owner's forms (a docstring here, or in a
# subclass, would become each operation's description in the schema); the form itself is
# forms_app's API.
class NoActionsMetadata(SimpleMetadata):
    """OPTIONS names the view and what it takes and gives; no serializer form: these views'
    inputs are described by the schema, and they have no serializer class to describe."""

    def determine_actions(self, request, view) -> dict:
        return {}


class UnderForm(viewsets.GenericViewSet):
    lookup_value_regex = "[^/]+"
    metadata_class = NoActionsMetadata

    def get_queryset(self):
        return forms_of(self.request.user)

    # The role each action needs on the form (forms_app/access.py); reading needs a viewer.
    needed_roles: dict[str, str] = {}

    def get_object(self) -> Form:
        needed = self.needed_roles.get(self.action or "", Role.VIEWER)
        return access.form_for(self.request.user, self.kwargs["pk"], needed)

    def submission(self, submission_id: str) -> Submission:
        """One submission of this form, in either folder; 404 for any other."""
        return get_object_or_404(Submission, form=self.get_object(), pk=submission_id)


class FormSubmissionViewSet(UnderForm):
    needed_roles = {"delete_submission": Role.EDITOR, "not_spam": Role.EDITOR,
                    "mark_spam": Role.EDITOR}

    @extend_schema(
        request=None,
        parameters=[PageParams],
        responses={200: SubmissionPageSchema},
        summary="List a form's submissions, newest first, with metadata",
    )
    @action(detail=True, methods=["get"])
    def submissions(self, request: Request, pk: str) -> Response:
        form = self.get_object()
        params = query_params(PageParams, request)
        result = submissions_page(
            form, page=params["page"], limit=params["limit"], status=params["status"]
        )
        return Response(
            {
                "data": add_files([submission_json(row, with_meta=True) for row in result.rows],
                                  form),
                "page": result.page,
                "limit": result.limit,
                "total": result.total,
                "totalPages": result.total_pages,
            }
        )

    @extend_schema(request=None, responses={204: None, 403: error(ROLE_TOO_LOW)},
                   summary="Erase one submission")
    @action(
        detail=True,
        methods=["delete"],
        url_path=r"submissions/(?P<submission_id>[^/]+)",
        url_name="submission-detail",
    )
    def delete_submission(self, request: Request, pk: str, submission_id: str) -> Response:
        submission_delete(submission=self.submission(submission_id), actor=signed_in(request))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=None,
        responses={200: OwnerSubmissionSchema, 403: error(ROLE_TOO_LOW)},
        summary="Not spam: move a submission to the inbox, count and deliver it",
    )
    @action(
        detail=True,
        methods=["post"],
        url_path=r"submissions/(?P<submission_id>[^/]+)/not-spam",
        url_name="submission-not-spam",
    )
    def not_spam(self, request: Request, pk: str, submission_id: str) -> Response:
        rescued = submission_rescue(submission=self.submission(submission_id),
                                    actor=signed_in(request))
        return Response(add_files([submission_json(rescued, with_meta=True)], rescued.form)[0])

    @extend_schema(
        request=None,
        responses={200: OwnerSubmissionSchema, 403: error(ROLE_TOO_LOW)},
        summary="Spam: move a submission to the spam folder",
    )
    @action(
        detail=True,
        methods=["post"],
        url_path=r"submissions/(?P<submission_id>[^/]+)/spam",
        url_name="submission-spam",
    )
    def mark_spam(self, request: Request, pk: str, submission_id: str) -> Response:
        marked = submission_mark_spam(submission=self.submission(submission_id),
                                      actor=signed_in(request))
        return Response(add_files([submission_json(marked, with_meta=True)], marked.form)[0])

    @extend_schema(
        request=None,
        parameters=[OpenApiParameter("format", enum=["csv", "json"], required=True)],
        responses={200: OpenApiResponse(description="CSV or JSON attachment, oldest first")},
        summary="Export every submission",
    )
    @action(detail=True, methods=["get"])
    def export(self, request: Request, pk: str) -> StreamingHttpResponse:
        form = self.get_object()
        kind = query_params(ExportParams, request)["format"]
        submissions_exported(form=form, kind=kind, matching=False, actor=signed_in(request))
        return export.attachment(form, kind)
