"""A webhook URL is checked at create time as the HTTP client will read it: any spelling of a
private address, and any URL whose host two parsers read differently, is refused at once."""

import ipaddress

import pytest

from integrations.clients.http import is_public
from integrations.models import Integration

NEW = "/api/v1/integrations"

REFUSED = [
    "https://127.0.0.1/",
    "https://127.1/",
    "https://0x7f.1/",
    "https://0177.0.0.1/",
    "https://2130706433/",
    "https://localhost./hook",
    "https://LOCALHOST/hook",
    "https://[::1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[fec0::1]/",
    "https://192.0.0.8/",
    "https://169.254.169.254/latest/meta-data",
    "https://127.0.0.1\\@evil.test/",
    "https://evil.test\\@127.0.0.1/",
    "https://evil.test /hook",
    "https://evil.test/\thook",
]


@pytest.mark.parametrize("url", REFUSED)
def test_private_or_ambiguous_urls_are_refused_at_create(owner_api, url):
    response = owner_api.post(NEW, {"type": "WEBHOOK", "config": {"url": url}}, format="json")

    assert response.status_code == 400, url
    assert "config.url" in response.json()["details"]
    assert Integration.objects.count() == 0


@pytest.mark.parametrize("url", ["https://hooks.example.com/in", "https://93.184.216.34/x"])
def test_public_urls_are_accepted(owner_api, url):
    response = owner_api.post(NEW, {"type": "WEBHOOK", "config": {"url": url}}, format="json")

    assert response.status_code == 201


@pytest.mark.parametrize("address", ["fec0::1", "feff::1", "192.0.0.8", "192.0.0.170"])
def test_site_local_and_special_purpose_addresses_are_not_public(address):
    assert not is_public(ipaddress.ip_address(address))
