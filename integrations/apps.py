from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Delivery's tasks live in its package, where Celery's discovery (<app>.tasks) does
        # not look: registered here, under the names they always had.
        import integrations.delivery.tasks  # noqa: F401
        from core import metrics
        from forms_app import hooks as forms_hooks
        from integrations import kinds, on_forms, on_submissions, services
        from pullapi import hooks as pullapi_hooks
        from submissions import hooks
        from teams import hooks as teams_hooks

        # Deliveries are written when submissions are stored, rescued, marked or deleted.
        hooks.register(on_submissions.Deliveries())
        # A deleted form's deliveries are held before they cascade, after submissions'
        # receiver has held the form (submissions comes first in INSTALLED_APPS).
        forms_hooks.register_deleting(on_forms.FormDeliveries())
        # The owner's notification follows its form's notifyOwner.
        forms_hooks.register_saved(services.form_saved)
        # A member removed or demoted loses notifications and subscriptions with the role.
        teams_hooks.register_reach_changed(services.team_reach_changed)
        # A key revoked, deleted or narrowed ends its subscriptions, each in the log.
        pullapi_hooks.register_subscriptions_end(services.subscriptions_end)
        # Every kind's delivery counters are in the scrape from the start, at 0, as the
        # submission outcomes are: a dashboard's rate() needs the series before its first event.
        for kind in [*kinds.KINDS, *kinds.BUILT_IN]:
            for outcome in metrics.DELIVERY_OUTCOMES:
                metrics.deliveries.labels(kind, outcome)
