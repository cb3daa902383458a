"""The actions the log records, by family: what the dashboard's filter offers and the API docs
list. A family (``form``) filters every action of it."""

ACTIONS = {
    "form": ("form.created", "form.changed", "form.moved", "form.deleted"),
    "team": ("team.created", "team.changed", "team.deleted"),
    "member": ("member.invited", "member.invitation_withdrawn", "member.joined",
               "member.role_changed", "member.removed", "member.left"),
    "integration": ("integration.created", "integration.changed", "integration.deleted",
                    "integration.tested"),
    "subscription": ("subscription.created", "subscription.changed", "subscription.deleted"),
    "api_key": ("api_key.created", "api_key.changed", "api_key.revoked", "api_key.deleted"),
    "submissions": ("submissions.deleted", "submissions.marked_spam",
                    "submissions.marked_not_spam", "submissions.exported"),
    "erasure": ("erasure.created",),
    "file": ("file.deleted",),
    "storage": ("storage.quota_changed",),
    "account": ("account.password_changed", "account.two_factor_enabled",
                "account.two_factor_disabled", "account.created", "account.changed",
                "account.deleted"),
}

FAMILY_LABELS = {
    "form": "Forms", "team": "Team", "member": "Members", "integration": "Integrations",
    "subscription": "Subscriptions",
    "api_key": "API keys", "submissions": "Submissions", "erasure": "Erasures",
    "file": "Files", "storage": "Storage",
    "account": "Account",
}


def every_action() -> list[str]:
    return [action for actions in ACTIONS.values() for action in actions]
