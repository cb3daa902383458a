from rest_framework import serializers

from accounts.models import User
from config import strict


class CredentialsSerializer(serializers.Serializer):
    email = strict.EmailField(max_length=254)
    password = strict.CharField(max_length=256, trim_whitespace=False)


class EmailSerializer(serializers.Serializer):
    email = strict.EmailField(max_length=254)


class VerifyEmailSerializer(serializers.Serializer):
    email = strict.EmailField(max_length=254)
    # Any text: a malformed code is simply a wrong one (400 invalid_code, and a used try).
    code = strict.CharField(max_length=64, trim_whitespace=True)


class ResetPasswordSerializer(VerifyEmailSerializer):
    password = strict.CharField(max_length=256, trim_whitespace=False)


class ChangePasswordSerializer(serializers.Serializer):
    currentPassword = strict.CharField(max_length=256, trim_whitespace=False)
    newPassword = strict.CharField(max_length=256, trim_whitespace=False)


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
