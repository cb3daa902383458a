"""The broker guard (core/infra/broker.py): one failure pauses publishing, and only a failure."""

from kombu.exceptions import OperationalError

from core.infra import broker


def failing():
    raise OperationalError("connection refused")


def test_a_skipped_message_does_not_extend_the_pause():
    broker.breaker.reset()
    sent = []
    assert not broker.publish(failing, "first")
    paused_until = broker.breaker.closed_until

    for n in range(5):
        assert not broker.publish(lambda n=n: sent.append(n), f"skipped {n}")

    assert sent == []  # not tried during the pause
    assert broker.breaker.closed_until == paused_until  # and the pause ends when it would
    broker.breaker.closed_until = 0.0  # the pause is over
    assert broker.publish(lambda: sent.append("after"), "after")
    assert sent == ["after"]


def test_the_sweeper_tries_even_during_the_pause_and_ends_it():
    broker.breaker.reset()
    broker.publish(failing, "first")
    sent = []

    assert broker.publish(lambda: sent.append("swept"), "sweep", always_try=True)

    assert sent == ["swept"]
    assert broker.breaker.open()  # it worked: the others publish again too
