"""What integrations do when a form is deleted, registered on forms_app's hooks at start
(forms_app/hooks.py): the form's deliveries are held before the form's rows cascade."""

from __future__ import annotations

from forms_app.models import Form
from integrations.delivery.enqueue import deliveries_hold, deliveries_of_form


class FormDeliveries:
    def deleting(self, form: Form) -> None:
        # After submissions' receiver has held the form and its submissions, so the set is
        # final: no new delivery can join it (docs/exactness.md, "Deleting a form").
        deliveries_hold(deliveries_of_form(form.pk))
