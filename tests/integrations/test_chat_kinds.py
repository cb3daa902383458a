"""SLACK and DISCORD integrations against a local fake of their incoming webhooks (contract,
"Notifications and the delivery ledger")."""

import pytest

from integrations.models import Delivery, Integration
from tests.conftest import submit
from tests.fakes import Reply

URL = "/api/v1/integrations"
SLACK_LIMIT, DISCORD_LIMIT = 3000, 2000


@pytest.fixture(params=["SLACK", "DISCORD"])
def kind(request):
    return request.param


@pytest.fixture
def chat(owner_api, receiver, kind):
    response = owner_api.post(URL, {"type": kind, "config": {
        "webhookUrl": f"{receiver.url}/services/T000/B000/secret-token"}}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def posted(receiver) -> dict:
    assert len(receiver.requests) == 1
    return receiver.requests[0].json()


def slack_texts(message: dict) -> list[str]:
    return [block["text"]["text"] for block in message["blocks"]]


def test_the_webhook_url_is_shown_once_then_masked(owner_api, chat, receiver):
    assert chat["config"]["webhookUrl"] == f"{receiver.url}/services/T000/B000/secret-token"

    listed = owner_api.get(URL).json()[0]
    assert listed["config"]["webhookUrl"] == "****oken"


@pytest.mark.parametrize("url", ["http://hooks.example/x", "https://127.0.0.1/x", "not a url",
                                 "https://hooks.example/a b", 42])
def test_the_url_follows_the_webhook_rules(owner_api, kind, url, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False

    response = owner_api.post(URL, {"type": kind, "config": {"webhookUrl": url}}, format="json")

    assert response.status_code == 400
    assert "config.webhookUrl" in response.json()["details"]
    assert not Integration.objects.exists()


def test_slack_message_names_the_form_and_lists_every_field(public, form, owner_api, receiver):
    owner_api.post(URL, {"type": "SLACK", "config": {"webhookUrl": f"{receiver.url}/s"}},
                   format="json")

    submit(public, form, {"name": "Ada", "message": "Hello there", "n": 3})

    message = posted(receiver)
    assert message["text"] == "New submission to Contact"
    assert slack_texts(message) == ["*New submission to Contact*",
                                    "name: Ada\nmessage: Hello there\nn: 3"]
    assert message["unfurl_links"] is False and message["unfurl_media"] is False
    assert Delivery.objects.get().state == "delivered"


def test_slack_text_can_neither_mention_nor_link(public, form, owner_api, receiver):
    owner_api.post(URL, {"type": "SLACK", "config": {"webhookUrl": f"{receiver.url}/s"}},
                   format="json")

    submit(public, form, {"<!channel>": "<@U123> <https://evil.example|click> & <!here>"})

    fields = slack_texts(posted(receiver))[1]
    assert "<" not in fields and ">" not in fields
    assert fields == ("&lt;!channel&gt;: &lt;@U123&gt; &lt;https://evil.example|click&gt; "
                      "&amp; &lt;!here&gt;")


def test_slack_blocks_are_cut_to_3000_characters_without_breaking_an_escape(public, form,
                                                                           owner_api,
                                                                           receiver):
    owner_api.post(URL, {"type": "SLACK", "config": {"webhookUrl": f"{receiver.url}/s"}},
                   format="json")

    submit(public, form, {"message": "&" * 5000})

    fields = slack_texts(posted(receiver))[1]
    assert len(fields) <= SLACK_LIMIT
    assert fields.endswith("&amp;…")


def test_discord_message_names_the_form_and_allows_no_mentions(public, form, owner_api,
                                                              receiver):
    owner_api.post(URL, {"type": "DISCORD", "config": {"webhookUrl": f"{receiver.url}/d"}},
                   format="json")

    submit(public, form, {"name": "Ada", "message": "@everyone look [here](https://evil.example)"})

    message = posted(receiver)
    assert message["allowed_mentions"] == {"parse": []}
    assert message["flags"] == 4  # no link previews
    lines = message["content"].split("\n")
    assert lines[0] == "**New submission to Contact**"
    assert lines[1] == "name: Ada"
    # The masked link is escaped Markdown: shown as typed, never a link.
    assert lines[2] == r"message: @everyone look \[here\]\(https\://evil.example\)"


def test_discord_content_is_cut_to_2000_characters(public, form, owner_api, receiver):
    owner_api.post(URL, {"type": "DISCORD", "config": {"webhookUrl": f"{receiver.url}/d"}},
                   format="json")

    submit(public, form, {"message": "*" * 5000})

    content = posted(receiver)["content"]
    assert len(content) <= DISCORD_LIMIT
    assert content.endswith("\\*…")  # never a lone backslash that would escape the …


@pytest.mark.parametrize("status", [404, 410])
def test_a_deleted_channel_webhook_disables_the_integration(public, form, chat, receiver,
                                                            status):
    receiver.handler = lambda _r: Reply(status)

    submit(public, form)
    submit(public, form)

    integration = Integration.objects.get()
    assert integration.enabled is False
    assert len(receiver.requests) == 1


def test_429_waits_for_retry_after(public, form, chat, receiver):
    receiver.handler = lambda _r: Reply(429, headers={"Retry-After": "120"})

    submit(public, form)

    delivery = Delivery.objects.get()
    assert delivery.state == "pending"
    assert (delivery.next_attempt_at - delivery.created_at).total_seconds() >= 120
    assert Integration.objects.get().enabled is True


def test_the_test_button_posts_a_sample(owner_api, chat, receiver):
    response = owner_api.post(f"{URL}/{chat['_id']}/test")

    assert response.json()["success"] is True
    assert "Test form" in receiver.requests[0].body.decode()
