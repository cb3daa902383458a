"""Read-side queries about integrations."""

from django.db.models import Count, Max, Q, QuerySet

from accounts import mailer
from core.errors import ServiceError
from forms_app import access
from forms_app.access import form_lookup
from forms_app.models import Form
from integrations import kinds
from integrations.models import TEST, Delivery, DeliveryState, Integration
from teams.roles import Role


def failed_deliveries_count() -> Count:
    """Annotation: an integration's event deliveries that gave up (tests are not counted)."""
    return Count(
        "deliveries",
        filter=Q(deliveries__state=DeliveryState.FAILED) & ~Q(deliveries__event_type=TEST),
    )


def failed_deliveries_of(integration: Integration) -> int:
    return integration.deliveries.filter(state=DeliveryState.FAILED).exclude(
        event_type=TEST).count()



def ledger_of(submission) -> list[Delivery]:
    """Every delivery of one submission, with its kind and its latest attempt's time."""
    return list(
        Delivery.objects.filter(submission=submission)
        .select_related("integration")
        .annotate(last_attempt_at=Max("attempt_log__started_at"))
        .order_by("created_at", "id")
    )


def delivers(submission, delivery_id) -> bool:
    """Whether ``delivery_id`` is one of ``submission``'s deliveries."""
    return Delivery.objects.filter(submission=submission, pk=delivery_id).exists()


def reachable(user, needed: str = Role.VIEWER) -> QuerySet[Integration]:
    """The integrations on which ``user`` has at least the ``needed`` role: their own
    account-wide ones, and every one of a form they have that role on (forms_app/access.py).
    For one's own forms, exactly the integrations one made."""
    forms = access.reachable(user, needed).values("pk")
    return Integration.objects.filter(Q(owner=user, form__isnull=True) | Q(form__in=forms))


def shown_to(user, needed: str = Role.VIEWER) -> QuerySet[Integration]:
    """Those of ``reachable`` the integrations API shows: no built-in one, no subscription."""
    return reachable(user, needed).filter(hook=False).exclude(type__in=list(kinds.BUILT_IN))


def sheets_form(owner, identifier: str | None) -> Form | None:
    """The form a Google Sheets connection is limited to: one ``owner`` is editor or more
    on; any other is no form of theirs (404), the same answer whether it exists or not."""
    if not identifier:
        return None
    form = None
    if "\x00" not in identifier:  # no id or slug holds one; PostgreSQL refuses it
        form = access.reachable(owner, Role.EDITOR).filter(form_lookup(identifier)).first()
    if form is None:
        raise ServiceError("form_not_found", "No form of yours has that id.", 404)
    return form


def page_rows(user) -> QuerySet[Integration]:
    """The integrations page's rows: those the integrations API lists to ``user`` (their own
    and those of their teams' forms), newest first, each with its form and team and its count
    of failed deliveries (``failed``)."""
    return (shown_to(user).select_related("form__team")
            .annotate(failed=failed_deliveries_count()).order_by("-created_at"))


def managed_by(user) -> set:
    """The ids of the integrations ``user`` may change, test and delete: editor or more on
    the form (one's own account-wide ones too), as the integrations API asks."""
    return set(shown_to(user, Role.EDITOR).values_list("pk", flat=True))


def listed(owner) -> QuerySet[Integration]:
    """The integrations an owner added: not the built-in ones every form has (its owner's
    notification email), which the form's settings turn on and off, nor the subscriptions made
    through the hooks API (hooks/)."""
    return Integration.objects.filter(owner=owner, hook=False).exclude(
        type__in=list(kinds.BUILT_IN))


def receives(form, target_form_id, owner_id) -> bool:
    """Whether an integration of ``owner_id`` limited to ``target_form_id`` (None: every form
    of the account) receives ``form``'s submissions: the rule integrations/delivery/enqueue.py
    writes in SQL."""
    return target_form_id == form.pk or (
        target_form_id is None and owner_id == form.account_wide_owner_id)


# Worst first: a form is as healthy as its least healthy integration.
HEALTH_ORDER = ("failing", "never_run", "healthy")


def health_by_form(forms: list) -> dict:
    """For each form, the health of the enabled integrations that receive its submissions,
    whoever made them, as integrations_for_form lists them (so every member of a team sees
    the same): "failing", "never_run" or "healthy"; None if there are none. One statement."""
    wide = {form.account_wide_owner_id for form in forms} - {None}
    receiving = Q(form_id__in=[form.pk for form in forms]) | (
        Q(form__isnull=True, owner_id__in=wide) & ~Q(type__in=list(kinds.BUILT_IN)))
    rows = list(Integration.objects.filter(receiving, enabled=True, hook=False)
                .values_list("form_id", "owner_id", "status"))
    health = {}
    for form in forms:
        states = {status for target, owner_id, status in rows
                  if receives(form, target, owner_id)}
        health[form.pk] = next((state for state in HEALTH_ORDER if state in states), None)
    return health


def integrations_for_form(form) -> list[Integration]:
    """The integrations that receive ``form``'s submissions, whoever made them, so every
    member with a role on a team form sees the same: the notification email of each person
    who has it on, then those made on the form and, on one's own form, one's account-wide
    ones (the rule integrations/delivery/enqueue.py writes in SQL)."""
    built_in = (Integration.objects.filter(form=form, type__in=list(kinds.BUILT_IN), enabled=True)
                .select_related("owner").annotate(failed=failed_deliveries_count()))
    receiving = Q(form=form)
    if form.account_wide_owner_id is not None:
        receiving |= Q(form__isnull=True, owner_id=form.account_wide_owner_id)
    made = (Integration.objects.filter(receiving, hook=False).exclude(type__in=list(kinds.BUILT_IN))
            .select_related("form").annotate(failed=failed_deliveries_count())
            .order_by("-created_at"))
    return [*built_in, *made]


def mail_server() -> mailer.State:
    """The mail server that account mail and the owners' notifications leave through, as the
    last send found it (accounts/mailer.py records every send)."""
    return mailer.state()
