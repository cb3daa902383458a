"""Where one app acts for another through a hook, the other registers at start (its
AppConfig.ready(), which runs in web processes, workers and management commands alike): the
app that calls the hook imports none of them (docs/architecture.md, "Hooks")."""


def test_an_operators_usage_reset_reaches_intakes_admission():
    from accounts import hooks
    from submissions.intake import admission

    assert hooks.usage_resets == [admission.reset]
