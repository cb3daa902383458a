from django.contrib.auth import password_validation
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.models import User
from core.api import strict


def _new_password_schema() -> dict:
    """What the configured password validators ask of a new password, as JSON Schema (they
    enforce it; this only describes it). A common password, or one too like the address,
    cannot be put in a schema."""
    schema: dict = {"type": "string", "maxLength": 256}
    for validator in password_validation.get_default_password_validators():
        if isinstance(validator, password_validation.MinimumLengthValidator):
            schema["minLength"] = validator.min_length
        if isinstance(validator, password_validation.NumericPasswordValidator):
            schema["pattern"] = "^[^\\u0000]*[^\\u0000\\d][^\\u0000]*$"  # not digits alone
    schema["description"] = " ".join(password_validation.password_validators_help_texts())
    return schema


@extend_schema_field(_new_password_schema())
class NewPasswordField(strict.CharField):
    """A password being chosen; the service checks it with the password validators. Its
    length is checked here too, so the schema's minLength is the one enforced."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("min_length", _new_password_schema().get("minLength"))
        super().__init__(**kwargs)


class CredentialsSerializer(serializers.Serializer):
    email = strict.EmailField(max_length=254)
    password = strict.CharField(max_length=256, trim_whitespace=False)
    # With two-step sign-in on: a current time code or an unused recovery code.
    otp = strict.CharField(max_length=64, required=False, allow_blank=True)


class TwoFactorSetupSerializer(serializers.Serializer):
    secret = serializers.CharField()
    otpauthUri = serializers.CharField()


class OtpCodeSerializer(serializers.Serializer):
    code = strict.CharField(max_length=64)


class TwoFactorDisableSerializer(serializers.Serializer):
    password = strict.CharField(max_length=256, trim_whitespace=False)
    code = strict.CharField(max_length=64)


class RecoveryCodesSerializer(serializers.Serializer):
    recoveryCodes = serializers.ListField(child=serializers.CharField())


class SignupSerializer(serializers.Serializer):
    email = strict.EmailField(max_length=254)
    password = NewPasswordField(max_length=256, trim_whitespace=False)


class EmailSerializer(serializers.Serializer):
    email = strict.EmailField(max_length=254)


class VerifyEmailSerializer(serializers.Serializer):
    email = strict.EmailField(max_length=254)
    # Any text: a malformed code is simply a wrong one (400 invalid_code, and a used try).
    code = strict.CharField(max_length=64, trim_whitespace=True)


class ResetPasswordSerializer(VerifyEmailSerializer):
    password = NewPasswordField(max_length=256, trim_whitespace=False)


class ChangePasswordSerializer(serializers.Serializer):
    # Left out only by an account with no usable password yet (sign-ups that disagreed).
    currentPassword = strict.CharField(max_length=256, trim_whitespace=False, required=False)
    newPassword = NewPasswordField(max_length=256, trim_whitespace=False)


class MessageSerializer(serializers.Serializer):
    message = serializers.CharField()


class UserSerializer(serializers.ModelSerializer):
    _id = serializers.CharField(source="pk", read_only=True)
    isVerified = serializers.BooleanField(source="is_verified", read_only=True)
    onboardingComplete = serializers.BooleanField(source="onboarding_complete", read_only=True)

    class Meta:
        model = User
        fields = ["_id", "email", "isVerified", "onboardingComplete"]


class CurrentUserSerializer(UserSerializer):
    monthlySubmissionCount = serializers.IntegerField(
        source="monthly_submission_count", read_only=True
    )
    monthlySubmissionLimit = serializers.IntegerField(
        source="effective_monthly_limit", read_only=True
    )

    class Meta:
        model = User
        fields = [
            "_id",
            "email",
            "name",
            "isVerified",
            "onboardingComplete",
            "monthlySubmissionCount",
            "monthlySubmissionLimit",
        ]


class UserEnvelopeSerializer(serializers.Serializer):
    user = UserSerializer()


class CurrentUserEnvelopeSerializer(serializers.Serializer):
    user = CurrentUserSerializer()


class TokenSerializer(serializers.Serializer):
    accessToken = serializers.CharField()
    tokenType = serializers.CharField()
    expiresIn = serializers.IntegerField()


class ProfileSerializer(serializers.Serializer):
    name = strict.CharField(max_length=150, allow_blank=True, required=False)
    onboardingComplete = strict.BooleanField(source="onboarding_complete", required=False)
