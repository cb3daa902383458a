"""The form API. A form's submissions are the submissions app's API (submissions/api/), under
the same paths. Every form is reached through forms_app/access.py: no role is 404, a role
too low 403."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import signed_in
from core.api.schema import ROLE_TOO_LOW, error
from forms_app import access, hooks, selectors, services
from forms_app.models import Form
from forms_app.serializers import FormInputSerializer, FormSerializer
from teams.roles import Role

FORBIDDEN = error(ROLE_TOO_LOW)
SLUG_TAKEN = error("slug_taken: another form already has this slug; honeypot_conflict: a "
                   "field rule names the form's honeypot field")


def shown(form: Form, role: str | None) -> dict:
    """The form as the API shows it, with its folders' sizes and the caller's role."""
    form.caller_role = role  # type: ignore[attr-defined]
    return FormSerializer(hooks.annotated([form])[0]).data


@extend_schema(request=FormInputSerializer, responses=FormSerializer)
class FormViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = FormSerializer
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        return selectors.forms_of(self.request.user)

    def list(self, request: Request) -> Response:
        forms = hooks.annotated(self.get_queryset())
        return Response(FormSerializer(forms, many=True).data)

    @extend_schema(responses={200: FormSerializer})
    def retrieve(self, request: Request, pk: str) -> Response:
        form = self.get_object()
        return Response(shown(form, access.role_on(form)))

    def get_object(self, needed: str = Role.VIEWER) -> Form:
        return access.form_for(self.request.user, self.kwargs["pk"], needed)

    def _input(self, partial: bool) -> dict:
        serializer = FormInputSerializer(data=self.request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    @extend_schema(responses={201: FormSerializer, 403: FORBIDDEN, 409: SLUG_TAKEN,
                              404: error("team_not_found: teamId names no team of the caller's")})
    def create(self, request: Request) -> Response:
        values = self._input(partial=False)
        team = access.team_to_admin(signed_in(request), values.pop("team_id", None))
        form = services.form_create(owner=signed_in(request), team=team,
                                    actor=signed_in(request), **values)
        return Response(shown(form, self._role(form)), status=status.HTTP_201_CREATED)

    def _role(self, form: Form) -> str | None:
        # Never None here: the caller made or moved the form where they are admin or owner.
        return access.role_of(signed_in(self.request), form)

    @extend_schema(responses={200: FormSerializer, 403: FORBIDDEN, 409: SLUG_TAKEN},
                   description="A settings change needs the editor role; a move (`teamId`) "
                               "the admin role on both sides.")
    def partial_update(self, request: Request, pk: str) -> Response:
        changes = self._input(partial=True)
        moving = "team_id" in changes
        team_id = changes.pop("team_id", None)
        form = self.get_object(Role.ADMIN if moving else Role.EDITOR)
        team = access.team_to_admin(signed_in(request), team_id, form) if moving else None
        if changes:
            form = services.form_update(form=form, actor=signed_in(request), **changes)
        if moving:
            form = services.form_move(form=form, team=team, actor=signed_in(request))
        return Response(shown(form, self._role(form)))

    @extend_schema(responses={204: None, 403: FORBIDDEN})
    def destroy(self, request: Request, pk: str) -> Response:
        services.form_delete(form=self.get_object(Role.ADMIN), actor=signed_in(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
