"""What files do when a form changes, registered on forms_app's hooks at start
(forms_app/hooks.py): a deleted form's files go with it."""

from __future__ import annotations

from files.services import delete_files_of_form
from forms_app.models import Form


class FormFiles:
    def deleting(self, form: Form) -> None:
        # By the form, before its rows cascade; the objects leave the store on commit.
        delete_files_of_form(form.pk)
