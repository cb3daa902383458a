from __future__ import annotations

from django.conf import settings
from django.db import models

from core.ids import IdField
from teams.roles import Role


class Team(models.Model):
    id = IdField()
    name = models.CharField(max_length=200)
    # Whose monthly limit the team's forms count on: the owner who made the team, until an
    # owner hands it to another owner. Null only once that account is deleted; the forms
    # then count on their creators.
    account_of_record = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
        related_name="teams_of_record",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="one_role_a_team")]
        indexes = [models.Index(fields=["user", "team"])]

    def __str__(self) -> str:
        return f"{self.user_id} {self.role} of {self.team_id}"


class Invitation(models.Model):
    id = IdField()
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=10, choices=Role.choices)
    # SHA-256 of the emailed token (256 random bits); the token itself is never stored.
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["email", "expires_at"])]

    def __str__(self) -> str:
        return f"{self.email} to {self.team_id}"
