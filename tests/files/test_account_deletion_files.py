"""An account of record deleted in the admin beside another owner: the team's forms pass to
the heir (teams/services.py account_leaving), and so must the files of their submissions."""

from __future__ import annotations

import pytest

from accounts.models import User
from files.models import StoredFile
from forms_app.services import form_create
from submissions.models import Submission
from teams.models import Membership
from teams.roles import Role
from teams.services import team_create
from tests.conftest import make_user
from tests.files.helpers import PDF, UPLOADS, post, upload

pytestmark = pytest.mark.django_db


# Known hole: a file's row belongs to the account its form counted on when it arrived
# (StoredFile.owner, on_delete CASCADE), and neither a hand-over of the account of record nor
# an account leaving moves files and their bytes to the new account. Strict: it fails the
# suite the day it holds, so this mark goes with the fix.
@pytest.mark.xfail(strict=True, reason="a team form's files stay on the account they arrived "
                                       "on, and go with it")
def test_the_team_keeps_its_submissions_files_when_its_account_of_record_is_deleted(
        admin_client, public, user, store):
    team = team_create(owner=user, name="Agency")
    heir = make_user("heir@example.com")
    Membership.objects.create(team=team, user=heir, role=Role.OWNER)
    form = form_create(owner=user, team=team, name="Jobs", rate_limit=10_000,
                       spam_filter=False, file_uploads=UPLOADS)
    assert post(public, form, {"cv": upload("cv.pdf", PDF)}).status_code == 200
    submission = Submission.objects.get()
    assert StoredFile.objects.filter(submission_id=submission.pk).count() == 1

    response = admin_client.post(f"/admin/accounts/user/{user.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not User.objects.filter(pk=user.pk).exists()
    assert Submission.objects.filter(pk=submission.pk).exists()  # the team's, and kept
    assert StoredFile.objects.filter(submission_id=submission.pk).count() == 1, (
        "the submission stays the team's but its file went with the deleted account")
