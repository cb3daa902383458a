"""Where one app acts for another through a hook, the other registers at start (its
AppConfig.ready(), which runs in web processes, workers and management commands alike): the
app that calls the hook imports none of them (docs/architecture.md, "Hooks")."""


def test_an_operators_usage_reset_reaches_intakes_admission():
    from accounts import hooks
    from submissions.intake import admission

    assert hooks.usage_resets == [admission.reset]


def test_the_forms_forms_app_shows_carry_their_folder_sizes():
    from forms_app import hooks
    from submissions.selectors import with_folder_sizes

    assert hooks.annotators == [with_folder_sizes]


def test_a_saved_form_keeps_its_owner_notification_in_step():
    from forms_app import hooks
    from integrations.services import form_saved

    assert hooks.on_saved == [form_saved]


def test_a_deleted_forms_rows_are_held_submissions_first_then_deliveries():
    """The order of the lock order (docs/exactness.md, "Deleting a form"): submissions'
    receiver holds the form's submissions and the form, then integrations' their deliveries."""
    from forms_app import hooks
    from integrations.on_forms import FormDeliveries
    from submissions.on_forms import FormSubmissions

    assert [type(receiver) for receiver in hooks.on_deleting] == [FormSubmissions,
                                                                  FormDeliveries]


def test_a_deletion_of_submissions_holds_their_deliveries_first():
    from integrations.on_submissions import Deliveries
    from submissions import hooks

    assert [type(receiver) for receiver in hooks.receivers] == [Deliveries]


def test_registration_and_account_deletion_hear_of_teams():
    from accounts import hooks
    from teams import selectors, services

    assert hooks.invitation_checks == [selectors.has_open_invitation]
    assert hooks.account_leavings == [services.account_leaving]


def test_a_members_role_changed_reaches_integrations():
    from integrations.services import team_reach_changed
    from teams import hooks

    assert hooks.on_reach_changed == [team_reach_changed]
