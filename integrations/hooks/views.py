"""``/api/v1/hooks``: subscribe, list, unsubscribe, and a trigger's sample. A key with the
``hooks`` scope reaches its own forms and subscriptions; the dashboard's session reaches the
whole account. Requests made with a key count against its minute, as the pull API's do."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import JWTCookieOrHeaderAuthentication, signed_in
from core.api import strict
from core.api.schema import NOT_BLANK, error
from core.api.strict import StrictSerializer
from core.timefmt import TimestampField
from integrations.hooks import services
from integrations.kinds.webhook import EVENTS
from integrations.models import Integration
from pullapi.authentication import KeyOrSessionAuthentication
from pullapi.models import HOOKS, ApiKey
from pullapi.params import invalid_parameter
from pullapi.views import KeyRateLimited
from submissions.representation import StoredFileSchema


@extend_schema_field(EVENTS)
class EventsField(serializers.JSONField):
    """Checked by the service, so any problem is reported under ``events`` itself."""


class HookInputSerializer(StrictSerializer):
    url = strict.CharField(max_length=2000, trim_whitespace=False,
                           help_text="https:// only, as a webhook's")
    formId = strict.CharField(max_length=100, help_text="the form's _id or slug")
    events = EventsField(required=False)


class HookSerializer(serializers.ModelSerializer):
    _id = serializers.CharField(source="pk", read_only=True)
    # The same id again: Zapier's REST hook examples unsubscribe with subscribeData.id.
    id = serializers.CharField(source="pk", read_only=True, help_text="the same as _id")
    url = serializers.SerializerMethodField()
    formId = serializers.CharField(source="form_id")
    events = serializers.ListField(source="event_list", child=serializers.CharField())
    createdAt = TimestampField(source="created_at")

    class Meta:
        model = Integration
        fields = ["_id", "id", "url", "formId", "events", "createdAt"]
        read_only_fields = fields

    def get_url(self, hook: Integration) -> str:
        return hook.config["url"]


class NewHookSerializer(HookSerializer):
    signingSecret = serializers.SerializerMethodField(
        help_text="whsec_…, to verify each delivery; shown in this answer only")

    class Meta(HookSerializer.Meta):
        fields = [*HookSerializer.Meta.fields, "signingSecret"]

    def get_signingSecret(self, hook: Integration) -> str:
        return hook.secrets["signingSecret"]


# A ``submission.created`` event body, as each delivery carries it.
SampleSerializer = inline_serializer("HookSample", {
    "type": serializers.ChoiceField(choices=["submission.created"]),
    "timestamp": serializers.DateTimeField(),
    "data": inline_serializer("HookSampleData", {
        "id": serializers.CharField(),
        "formId": serializers.CharField(),
        "formSlug": serializers.CharField(),
        "formName": serializers.CharField(),
        "submittedAt": serializers.DateTimeField(),
        "fields": serializers.DictField(help_text="the values by field name, in order"),
        "files": StoredFileSchema(many=True, required=False, help_text=(
            "The stored files: present when the form keeps uploads (fileUploads), or still "
            "holds files from when it did")),
    }),
})


FORM_ID = OpenApiParameter(
    "formId", {"type": "string", "minLength": 1, "maxLength": 100, "pattern": NOT_BLANK},
    required=True, description="the form's _id or slug",
)


class HookViewSet(KeyRateLimited, mixins.ListModelMixin, mixins.DestroyModelMixin,
                  viewsets.GenericViewSet):
    """REST hook subscriptions, for an API key with the ``hooks`` scope (a read-only key is
    403) or the dashboard's session. A key reaches only its own forms and the subscriptions
    made with it; its requests count against its 60 a minute, with X-RateLimit-* headers."""

    authentication_classes = [KeyOrSessionAuthentication, JWTCookieOrHeaderAuthentication]
    serializer_class = HookSerializer

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        api_key = self.api_key()
        if api_key is not None:
            self.count_key_request(api_key)
            if HOOKS not in api_key.scope_list:
                raise services.missing_scope()

    def finalize_response(self, request: Request, response, *args: Any, **kwargs: Any):
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Cache-Control"] = "no-store"  # a signing secret, submissions in the sample
        return response

    def api_key(self) -> ApiKey | None:
        auth = self.request.auth
        return auth if isinstance(auth, ApiKey) else None

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema's generator asks
            return Integration.objects.none()
        return services.hooks_of(owner=signed_in(self.request), api_key=self.api_key())

    @extend_schema(
        summary="Subscribe a URL to a form's events (REST hook)",
        request=HookInputSerializer,
        responses={201: NewHookSerializer,
                   403: error("insufficient_scope: the key lacks the hooks scope"),
                   404: error("form_not_found: no such form, or the key cannot read it"),
                   429: error("rate_limited: the key's requests this minute")},
    )
    def create(self, request: Request) -> Response:
        serializer = HookInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        hook = services.hook_create(
            owner=signed_in(request), api_key=self.api_key(), url=data["url"],
            form_id=data["formId"], events=data.get("events"), actor=signed_in(request),
        )
        return Response(NewHookSerializer(hook).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="List subscriptions: a key's own, or the whole account's",
                   responses={200: HookSerializer(many=True),
                              403: error("insufficient_scope: the key lacks the hooks scope"),
                              429: error("rate_limited: the key's requests this minute")})
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(summary="Unsubscribe", responses={
        204: None, 403: error("insufficient_scope: the key lacks the hooks scope"),
        429: error("rate_limited: the key's requests this minute")})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        services.hook_delete(hook=self.get_object(), actor=signed_in(request))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="The form's 3 newest submissions as submission.created events, newest first",
        parameters=[FORM_ID],
        responses={200: serializers.ListSerializer(child=SampleSerializer),
                   403: error("insufficient_scope: the key lacks the hooks scope"),
                   404: error("form_not_found: no such form, or the key cannot read it"),
                   429: error("rate_limited: the key's requests this minute")},
    )
    @action(detail=False, methods=["get"])
    def sample(self, request: Request) -> Response:
        identifier = request.query_params.get("formId", "")
        if not identifier.strip() or "\x00" in identifier or len(identifier) > 100:
            raise invalid_parameter({"formId": "Give the form's _id or slug."})
        form = services.reachable_form(owner=signed_in(request), api_key=self.api_key(),
                                       identifier=identifier)
        return Response(services.hook_sample(form=form))
