from __future__ import annotations

import re

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import strict
from core.api.schema import NOT_BLANK
from core.api.strict import StrictSerializer
from core.timefmt import TimestampField
from forms_app import field_rules
from forms_app.limits import MAX_FILE_BYTES, MAX_FILES
from forms_app.models import CaptchaProvider, Form
from forms_app.origins import (
    SchemaPatternValidator,
    normalize_origin,
    origin_validator,
    url_validator,
)
from teams.roles import Role

MAX_ORIGINS = 100
MAX_BLOCKED_WORDS = 200
MAX_BLOCKED_WORD_LENGTH = 100
MAX_RETENTION_DAYS = 3650
MAX_UPLOAD_TYPES = 50
# type/subtype (RFC 6838's restricted names), or type/* for a family.
MIME_TYPE = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,62}/(\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,62})")
# A chosen slug: what hosted form services use as a form's id (Formspree's "xayzabcd").
SLUG_PATTERN = "^[A-Za-z0-9_-]{4,64}$"
READ_ONLY_KEYS = {
    "_id",
    "role",
    "endpoint",
    "recaptchaEnabled",
    "submissionCount",
    "spamCount",
    "createdAt",
    "updatedAt",
}


class FileUploadsSerializer(StrictSerializer):
    maxBytes = strict.IntegerField(min_value=1, max_value=MAX_FILE_BYTES)
    maxFiles = strict.IntegerField(min_value=1, max_value=MAX_FILES)
    # Strings whose pattern the API schema states, so a generated client knows what passes.
    types = serializers.ListField(
        child=strict.CharField(validators=[SchemaPatternValidator(
            f"^{MIME_TYPE.pattern}$",
            "Each type must be a MIME type (application/pdf) or a family (image/*).")]),
        min_length=1, max_length=MAX_UPLOAD_TYPES)

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError(
                "Must be null or an object of maxBytes, maxFiles and types.")
        # Whole even in a PATCH (a partial update would take a half object).
        missing = {name: "This field is required." for name in ("maxBytes", "maxFiles", "types")
                   if name not in data}
        if missing:
            raise serializers.ValidationError(missing)
        return super().to_internal_value(data)

    def validate_types(self, values: list) -> list[str]:
        """MIME types (``application/pdf``) or families (``image/*``), lower-cased."""
        types: list[str] = []
        for value in values:
            if not isinstance(value, str) or not MIME_TYPE.fullmatch(value):
                raise serializers.ValidationError(
                    "Each type must be a MIME type (application/pdf) or a family (image/*).")
            if value.lower() not in types:
                types.append(value.lower())
        return types


@extend_schema_field({"oneOf": [{"type": "number"}, {"type": "string", "format": "date"}],
                      "description": "number: a number; date: a date written YYYY-MM-DD"})
class RuleLimitField(serializers.JSONField):
    """A rule's ``min`` or ``max``: a number for a number field, a date for a date field."""


def _rule_variant(types: tuple[str, ...], **keys: dict) -> dict:
    """One shape a rule may have: the keys that mean something for these types, no others."""
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1,
                     "maxLength": field_rules.MAX_NAME_LENGTH, "pattern": NOT_BLANK},
            "type": {"type": "string", "enum": list(types)},
            "required": {"type": "boolean", "default": False},
            **keys,
        },
        "required": ["name", "type", *(["options"] if "options" in keys else [])],
        "additionalProperties": False,
    }


DATE = {"type": "string", "format": "date"}
NUMBER = {"type": "number"}
# Each type's own keys, so a rule the schema allows is one the server takes. What JSON Schema
# cannot say is in the description: names differ from rule to rule, and min is not above max.
RULES_SCHEMA = {
    "type": "array",
    "nullable": True,
    "maxItems": field_rules.MAX_RULES,
    "description": "The rules every submission is checked against; null takes any fields. "
                   "Each rule's name differs from the others', and a rule's min is not above "
                   "its max. No rule names a control field (_next, _subject, _gotcha and the "
                   "other services' hidden inputs) nor the form's honeypotField.",
    "items": {"oneOf": [
        _rule_variant(field_rules.LENGTH_TYPES, maxLength={
            "type": "integer", "minimum": 1, "maximum": field_rules.MAX_LENGTH}),
        _rule_variant(("number",), min=NUMBER, max=NUMBER),
        _rule_variant(("date",), min=DATE, max=DATE),
        _rule_variant(("select",), options={
            "type": "array", "minItems": 1, "maxItems": field_rules.MAX_OPTIONS,
            "uniqueItems": True,
            "items": {"type": "string", "minLength": 1,
                      "maxLength": field_rules.MAX_OPTION_LENGTH, "pattern": NOT_BLANK}}),
        _rule_variant(tuple(kind for kind in field_rules.TYPES if kind not in
                            (*field_rules.LENGTH_TYPES, *field_rules.RANGE_TYPES, "select"))),
    ]},
}


@extend_schema_field(RULES_SCHEMA)
class FieldRulesField(serializers.ListField):
    """``fields``: null or a list of rules, each problem keyed by the rule's position and key
    (``fields.2.type``), as the contract's Field rules section says; the one check is
    forms_app/field_rules.py, which the dashboard's editor reaches through this serializer."""

    def __init__(self, **kwargs) -> None:
        super().__init__(max_length=field_rules.MAX_RULES,
                         allow_null=True, **kwargs)

    def to_internal_value(self, data):
        problems = field_rules.rules_problems(data)
        if "" in problems:
            raise serializers.ValidationError(problems[""])
        if problems:
            raise serializers.ValidationError(problems)
        return field_rules.normalized(data)


class FormInputSerializer(StrictSerializer):
    ignored_keys = READ_ONLY_KEYS

    slug = strict.CharField(
        min_length=4, max_length=64, required=False, trim_whitespace=False,
        validators=[SchemaPatternValidator(
            SLUG_PATTERN, "A slug is 4 to 64 characters: letters, digits, '_' and '-'.")],
    )
    name = strict.CharField(min_length=1, max_length=200)
    redirectUrl = strict.CharField(
        source="redirect_url", max_length=2000, allow_null=True, allow_blank=True, required=False,
        trim_whitespace=False, validators=[url_validator],
    )
    allowedOrigins = serializers.ListField(
        source="allowed_origins",
        # Untrimmed: text around an origin makes it not one, as the schema's pattern says.
        child=strict.CharField(
            max_length=300, trim_whitespace=False, validators=[origin_validator]
        ),
        max_length=MAX_ORIGINS,
        required=False,
    )
    rateLimit = strict.IntegerField(
        source="rate_limit", min_value=1, max_value=10_000, required=False
    )
    honeypotField = strict.CharField(
        source="honeypot_field", max_length=100, allow_null=True, allow_blank=True, required=False
    )
    captchaProvider = strict.ChoiceField(
        source="captcha_provider", choices=CaptchaProvider.values, required=False
    )
    spamFilter = strict.ChoiceField(source="spam_filter", choices=["on", "off"], required=False)
    blockedWords = serializers.ListField(
        source="blocked_words",
        child=strict.CharField(min_length=1, max_length=MAX_BLOCKED_WORD_LENGTH),
        max_length=MAX_BLOCKED_WORDS,
        required=False,
    )
    retentionDays = strict.IntegerField(
        source="retention_days", min_value=1, max_value=MAX_RETENTION_DAYS, allow_null=True,
        required=False,
    )
    fileUploads = FileUploadsSerializer(source="file_uploads", allow_null=True, required=False)
    notifyOwner = strict.BooleanField(source="notify_owner", required=False)
    fields = FieldRulesField(source="field_rules", required=False)  # type: ignore[assignment]
    allowExtraFields = strict.BooleanField(source="allow_extra_fields", required=False)
    teamId = serializers.UUIDField(
        source="team_id", allow_null=True, required=False,
        help_text="The team the form belongs to (admin there), or null: the creator's own.")
    recaptchaSecret = strict.CharField(
        source="recaptcha_secret",
        max_length=500,
        allow_null=True,
        allow_blank=True,
        required=False,
        write_only=True,
    )

    def validate_redirectUrl(self, value: str | None) -> str | None:
        return value or None  # its pattern (url_validator) has done the checking

    def validate_allowedOrigins(self, values: list[str]) -> list[str]:
        normalized = []
        for value in values:
            origin = normalize_origin(value)
            if origin is None:
                raise serializers.ValidationError(
                    f"'{value}' is not an origin (scheme://host[:port], no path)."
                )
            if origin not in normalized:
                normalized.append(origin)
        return normalized

    def validate_spamFilter(self, value: str) -> bool:
        return value == "on"

    def validate_blockedWords(self, values: list[str]) -> list[str]:
        words: list[str] = []
        for value in values:
            word = " ".join(value.split())
            if not word:
                raise serializers.ValidationError("A blocked word cannot be blank.")
            if word.lower() not in (known.lower() for known in words):
                words.append(word)
        return words

    def validate_honeypotField(self, value: str | None) -> str | None:
        value = (value or "").strip()
        return value or None


class FileUploadsOut(serializers.Serializer):
    maxBytes = serializers.IntegerField()
    maxFiles = serializers.IntegerField()
    types = serializers.ListField(child=serializers.CharField())


class FieldRule(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.ChoiceField(choices=field_rules.TYPES)
    required = serializers.BooleanField()  # type: ignore[assignment]  # the API's key name
    maxLength = serializers.IntegerField(required=False)
    min = RuleLimitField(required=False)
    max = RuleLimitField(required=False)
    options = serializers.ListField(child=serializers.CharField(), required=False)


class FormSerializer(serializers.ModelSerializer):
    _id = serializers.CharField(source="pk", read_only=True)
    redirectUrl = serializers.CharField(source="redirect_url", allow_null=True)
    allowedOrigins = serializers.ListField(source="allowed_origins", child=serializers.CharField())
    rateLimit = serializers.IntegerField(source="rate_limit")
    honeypotField = serializers.CharField(source="honeypot_field", allow_null=True)
    captchaProvider = serializers.ChoiceField(
        source="captcha_provider", choices=CaptchaProvider.values
    )
    spamFilter = serializers.SerializerMethodField()
    blockedWords = serializers.ListField(source="blocked_words", child=serializers.CharField())
    retentionDays = serializers.IntegerField(source="retention_days", allow_null=True)
    fileUploads = FileUploadsOut(source="file_uploads", allow_null=True)
    notifyOwner = serializers.BooleanField(
        source="notify_owner",
        help_text="Email each submission that reaches the inbox to the account's address",
    )
    fields = FieldRule(  # type: ignore[assignment]  # as FormInputSerializer's
        source="field_rules", many=True, allow_null=True,
        help_text="The rules every submission is checked against; null takes any fields")
    allowExtraFields = serializers.BooleanField(
        source="allow_extra_fields",
        help_text="With a list of rules: whether a field no rule names is taken")
    recaptchaEnabled = serializers.BooleanField(source="recaptcha_enabled")
    submissionCount = serializers.IntegerField(source="submission_count")
    spamCount = serializers.IntegerField(source="spam_count")
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")
    teamId = serializers.CharField(source="team_id", allow_null=True)
    role = serializers.ChoiceField(
        source="caller_role", choices=Role.choices,
        help_text="The caller's role on the form: owner of one's own form, else the team role.")

    class Meta:
        model = Form
        fields = [
            "_id",
            "slug",
            "name",
            "endpoint",
            "redirectUrl",
            "allowedOrigins",
            "rateLimit",
            "honeypotField",
            "captchaProvider",
            "spamFilter",
            "blockedWords",
            "retentionDays",
            "fileUploads",
            "notifyOwner",
            "fields",
            "allowExtraFields",
            "recaptchaEnabled",
            "submissionCount",
            "spamCount",
            "createdAt",
            "updatedAt",
            "teamId",
            "role",
        ]
        read_only_fields = fields

    def get_spamFilter(self, form: Form) -> str:
        return "on" if form.spam_filter else "off"
