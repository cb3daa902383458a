"""A rejected request leaves nothing alive: no error object, so no frame and no body.

An error raised from one shared module-level instance keeps the traceback of every request
that raised it, and with it every body those requests read, for the life of the process.
"""

import gc

from core.errors import ServiceError


def live_errors() -> list[ServiceError]:
    gc.collect()
    found = []
    for obj in gc.get_objects():
        try:
            if isinstance(obj, ServiceError):
                found.append(obj)
        except ReferenceError:  # a weak proxy whose object is gone
            continue
    return found


def test_rejected_requests_leave_no_error_alive(api, public, form, puller):
    # What other tests left behind, with the traceback each held then.
    before = {id(error): error.__traceback__ for error in live_errors()}

    for _ in range(3):
        assert public.post("/api/v1/f/no-such-form", {"a": "1"}, format="json").status_code == 404
        empty = public.post(f"/api/v1/f/{form.slug}", {}, format="json")
        assert empty.status_code == 400
        login = {"email": "nobody@example.com", "password": "wrong password"}
        assert api.post("/api/auth/login", login, format="json").status_code == 401
        verify = {"email": "nobody@example.com", "code": "000000"}
        assert api.post("/api/auth/verify-email", verify, format="json").status_code == 400
        assert puller.get("/api/v1/submissions", {"formId": "missing"}).status_code == 404

    # An error raised by these requests and still alive would hold a traceback it did not hold
    # before (a new error, or a shared one raised again).
    kept = [e for e in live_errors() if before.get(id(e), "new") is not e.__traceback__]
    assert kept == []
