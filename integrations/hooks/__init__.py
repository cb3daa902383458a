"""REST hook subscriptions (contract, "Event subscriptions and erasure"): the pattern by which
Zapier, Make and n8n subscribe a URL to a form's events, and unsubscribe it.

A subscription is a WEBHOOK integration marked ``hook``, so the outbox delivers its events
exactly as it delivers a webhook's: the same signing, retries, ledger and address rules. It
is not listed among the integrations, has its own limit (50 an account), ends with a 410 from
its target, and ends with the API key that made it.
"""
