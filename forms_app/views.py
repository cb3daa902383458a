"""The owner's form API. A form's submissions are the submissions app's API
(submissions/api/), under the same paths."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import signed_in
from forms_app import hooks, selectors, services
from forms_app.models import Form
from forms_app.serializers import FormInputSerializer, FormSerializer


def shown(form: Form) -> dict:
    """The form as the API shows it, with its folders' sizes."""
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

    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(shown(self.get_object()))

    def get_object(self) -> Form:
        form = get_object_or_404(
            self.get_queryset().filter(selectors.form_lookup(self.kwargs["pk"]))
        )
        self.check_object_permissions(self.request, form)
        return form

    def _input(self, partial: bool) -> dict:
        serializer = FormInputSerializer(data=self.request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    @extend_schema(responses={201: FormSerializer})
    def create(self, request: Request) -> Response:
        form = services.form_create(owner=signed_in(request), actor=signed_in(request),
                                    **self._input(partial=False))
        return Response(shown(form), status=status.HTTP_201_CREATED)

    def partial_update(self, request: Request, pk: str) -> Response:
        form = services.form_update(form=self.get_object(), actor=signed_in(self.request),
                                    **self._input(partial=True))
        return Response(shown(form))

    def perform_destroy(self, instance: Form) -> None:
        services.form_delete(form=instance, actor=signed_in(self.request))
