from rest_framework import serializers

from core.api import strict
from core.timefmt import TimestampField
from teams.roles import Role

ROLE_HELP = "viewer, editor, admin or owner; each includes the one before."


class TeamSerializer(serializers.Serializer):
    _id = serializers.CharField(source="pk")
    name = serializers.CharField()
    createdAt = TimestampField(source="created_at")
    role = serializers.ChoiceField(choices=Role.choices, help_text="The caller's role.")
    accountOfRecord = serializers.CharField(source="account_of_record_id", allow_null=True)


class TeamInputSerializer(strict.StrictSerializer):
    name = strict.CharField(min_length=1, max_length=200)


class TeamUpdateSerializer(strict.StrictSerializer):
    name = strict.CharField(min_length=1, max_length=200, required=False)
    accountOfRecord = serializers.UUIDField(
        required=False, help_text="The user id of another owner of the team.")


class MemberSerializer(serializers.Serializer):
    userId = serializers.CharField(source="user_id")
    email = serializers.EmailField(source="user.email")
    role = serializers.ChoiceField(choices=Role.choices)
    joinedAt = TimestampField(source="joined_at")


class RoleInputSerializer(strict.StrictSerializer):
    role = strict.ChoiceField(choices=Role.choices, help_text=ROLE_HELP, required=False)


class InvitationInputSerializer(strict.StrictSerializer):
    email = strict.EmailField(max_length=254)
    role = strict.ChoiceField(choices=Role.choices, help_text=ROLE_HELP)


class InvitationSerializer(serializers.Serializer):
    _id = serializers.CharField(source="pk")
    email = serializers.EmailField()
    role = serializers.ChoiceField(choices=Role.choices)
    createdAt = TimestampField(source="created_at")
    expiresAt = TimestampField(source="expires_at")


class AcceptInputSerializer(strict.StrictSerializer):
    token = strict.CharField(min_length=1, max_length=200)
