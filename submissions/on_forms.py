"""What submissions do when a form is deleted, registered on forms_app's hooks at start
(forms_app/hooks.py): its submissions and their files go with it."""

from __future__ import annotations

from forms_app.models import Form
from submissions.services import form_submissions_hold


class FormSubmissions:
    def deleting(self, form: Form) -> None:
        # First of the receivers: the form's rows and then the form itself are held, so
        # nothing new joins the form while it goes (docs/exactness.md, "Deleting a form").
        form_submissions_hold(form.pk)
