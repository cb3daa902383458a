"""Every request docs/integrations-events.md shows, replayed against the real views.

The doc's Zapier, Make and n8n walkthroughs give the requests each tool sends: ```http blocks,
Make's attach/detach descriptions (```json with a url and a method), and the URLs and bodies
the steps name in inline code. Each is sent as written, with the doc's stand-ins filled in:
a real hooks key for ``ff_live_…``, the form's slug for ``k3Jd8s-Q``, a loopback receiver for
the tool's own URL, and the ``_id`` the walkthrough's subscribe answered for ``{_id}``, ``…``
ids and the tools' templates. Each must get the answer the doc says (201 subscribe, 200 list
and sample, 204 unsubscribe) with the fields the tool maps, so a documented request the API
would refuse (a wrong path, a misspelt field) fails here."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from integrations.models import Integration
from pullapi.services import api_key_create
from tests.conftest import CommitClient, add_submission, bearer

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations-events.md"
ADDRESS = "forms.example.com"  # the doc's stand-in for the instance
SLUG = "k3Jd8s-Q"  # the doc's stand-in for a form
KEY = "ff_live_…"  # the doc's stand-in for a hooks key
METHODS = ("GET", "POST", "DELETE")
EXPECTED_STATUS = {"GET": 200, "POST": 201, "DELETE": 204}
SUBSCRIBE_FIELDS = ("_id", "id", "url", "formId", "events", "createdAt", "signingSecret")
FIELDS = {"name": "Ada", "email": "ada@example.com"}  # the form's one submission
EVENT_FIELDS = ("type", "timestamp", "data.id", "data.formId", "data.fields")
# The tools' templates, by what they stand for.
TEMPLATES = {
    "bundle.authData.apiKey": "key", "connection.apiKey": "key",
    "bundle.inputData.formId": "slug", "parameters.formId": "slug",
    "bundle.targetUrl": "receiver", "webhook.url": "receiver",
    "bundle.subscribeData._id": "hook_id", "webhook.externalHookId": "external_hook_id",
    "$json._id": "hook_id",
    # Zapier's and n8n's own convention: the subscription's ``id`` (the same as ``_id``).
    "bundle.subscribeData.id": "hook_id", "$json.id": "hook_id",
}


class UnparsedRequest(Exception):
    """A request in the doc this test cannot read: it says where, rather than skip it."""


@dataclass
class Documented:
    """One request as the doc writes it, stand-ins unfilled."""

    where: str  # "line N (http block)", for messages
    section: str
    method: str
    target: str  # a path, with its query
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    exact: bool = False  # an ```http block with its HTTP version: sent with its headers only
    answer_mapping: dict[str, str] = field(default_factory=dict)  # Make's "response"


# Reading the doc

HTTP_VERSION = " HTTP/1.1"
REQUEST_LINE = re.compile(r"(GET|POST|PUT|PATCH|DELETE) (/\S*)( HTTP/1\.1)?")
HEADER = re.compile(r"([A-Za-z][A-Za-z0-9-]*): (\S.*)")


def parse_http(text: str, where: str, section: str) -> Documented:
    """An ```http block: a request line, header lines, then (after a blank line, or at once
    for the doc's short form) a JSON body. Anything else is an UnparsedRequest."""
    lines = text.strip("\n").split("\n")
    request_line = REQUEST_LINE.fullmatch(lines[0].strip())
    if request_line is None:
        raise UnparsedRequest(f"{where}: not a request line: {lines[0]!r}")
    method, target, version = request_line.groups()
    headers: dict[str, str] = {}
    rest = lines[1:]
    while rest and (header := HEADER.fullmatch(rest[0])):
        headers[header.group(1)] = header.group(2).strip()
        rest = rest[1:]
    if rest and not rest[0].strip():
        rest = rest[1:]
    elif rest and not rest[0].lstrip().startswith(("{", "[")):
        raise UnparsedRequest(f"{where}: neither a header nor a body: {rest[0]!r}")
    body = _json_body("\n".join(rest), where) if "".join(rest).strip() else None
    return Documented(where, section, method, target, headers, body, exact=bool(version))


def _json_body(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UnparsedRequest(f"{where}: the body is not JSON ({error}): {text!r}") from None


def parse_make(text: str, where: str, section: str) -> Documented | None:
    """A ```json block that describes a request (Make's attach and detach); None for any
    other JSON (an event's body)."""
    described = _json_body(text, where)
    if not (isinstance(described, dict) and {"url", "method"} <= described.keys()):
        return None
    method = described["method"]
    if method not in METHODS:
        raise UnparsedRequest(f"{where}: an unknown method {method!r}")
    return Documented(where, section, method, _path_of(described["url"], where),
                      dict(described.get("headers", {})), described.get("body"),
                      answer_mapping=dict(described.get("response", {}).get("data", {})))


def _path_of(url: str, where: str) -> str:
    if url.startswith("/"):
        return url
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.netloc != ADDRESS:
        raise UnparsedRequest(f"{where}: not a URL of the instance ({ADDRESS}): {url!r}")
    return parts.path + (f"?{parts.query}" if parts.query else "")


SPAN = re.compile(r"`([^`]+)`")
# A path's characters: none blank, but a tool's template ("{{ $json._id }}") or "{_id}".
PATH_CHARS = r"(?:[^\s{]|\{\{[^}]*\}\}|\{\w+\})*"
URL_SPAN = re.compile(rf"(?:({'|'.join(METHODS)}) )?"
                      rf"((?:https://{re.escape(ADDRESS)})?/api/{PATH_CHARS})")
PROSE_METHOD = re.compile(rf"\bmethod ({'|'.join(METHODS)})\b")
ITEM_START = re.compile(r"\s*(?:-|\d+\.) ")


def parse_prose(text: str, first_line: int, section: str) -> list[Documented]:
    """The requests a walkthrough's steps name in inline code: ``GET https://…`` or "method
    DELETE and URL `https://…`", a POST's body the next span that opens with ``{``."""
    found = []
    for offset, unit in _units(text):
        spans = [(m.start(), " ".join(m.group(1).split())) for m in SPAN.finditer(unit)]
        for index, (start, span) in enumerate(spans):
            named = URL_SPAN.fullmatch(span)
            if named is None:
                continue
            line = first_line + offset + unit[:start].count("\n")
            where = f"line {line} (prose)"
            said = PROSE_METHOD.findall(unit[:start])
            method = named.group(1) or (said[-1] if said else None)
            if method is None:
                raise UnparsedRequest(f"{where}: a URL without a method: {span!r}")
            body = next((_json_body(later, where) for _, later in spans[index + 1:]
                         if later.startswith("{")), None) if method == "POST" else None
            found.append(Documented(where, section, method, _path_of(named.group(2), where),
                                    {"Authorization": f"Bearer {KEY}"}, body))
    return found


def _units(text: str) -> list[tuple[int, str]]:
    """Paragraphs and list items, each with its first line's offset in ``text``."""
    units: list[tuple[int, list[str]]] = []
    for number, line in enumerate(text.split("\n")):
        if not line.strip():
            units.append((number + 1, []))
        elif ITEM_START.match(line) or not units:
            units.append((number, [line]))
        else:
            units[-1][1].append(line)
    return [(start, "\n".join(lines)) for start, lines in units if lines]


@dataclass
class Piece:
    kind: str  # a fence's language, or "prose"
    section: str  # the heading above it
    line: int  # its first line in the doc
    text: str


def pieces(text: str) -> list[Piece]:
    """The doc cut into fenced blocks and the prose between them."""
    found: list[Piece] = []
    lines: list[str] = []
    section, fence, first = "", None, 1
    for number, line in enumerate(text.split("\n"), start=1):
        opens = fence is None and line.startswith("```")
        closes = fence is not None and line == "```"
        if opens or closes or (fence is None and line.startswith("#")):
            found.append(Piece(fence or "prose", section, first, "\n".join(lines)))
            fence = line[3:].strip() if opens else None
            section = line if line.startswith("#") else section
            lines, first = [], number + 1
        else:
            lines.append(line)
    if fence is not None:
        raise UnparsedRequest(f"line {first - 1}: a ```{fence} block is never closed")
    found.append(Piece("prose", section, first, "\n".join(lines)))
    return found


def documented_requests(text: str) -> list[Documented]:
    """Every request of the doc, in its order: its ```http blocks, the ```json blocks that
    describe a request, and in a tool's walkthrough (a ### section) its prose."""
    found: list[Documented] = []
    for piece in pieces(text):
        where = f"line {piece.line - 1} ({piece.kind} block)"
        if piece.kind == "http":
            found.append(parse_http(piece.text, where, piece.section))
        elif piece.kind == "json" and (made := parse_make(piece.text, where, piece.section)):
            found.append(made)
        elif piece.kind == "prose" and piece.section.startswith("### "):
            found.extend(parse_prose(piece.text, piece.line, piece.section))
    return found


DOCUMENTED = documented_requests(DOC.read_text())
SECTIONS = list(dict.fromkeys(request.section for request in DOCUMENTED))


# Replaying

@dataclass
class Stage:
    """What stands in for the doc's stand-ins, and what the walkthrough has made so far."""

    key: str
    session: str
    slug: str
    receiver: str
    hook_id: str | None = None
    mapped: dict[str, Any] = field(default_factory=dict)  # Make's webhook data

    def value(self, name: str) -> str:
        if name == "external_hook_id":  # what Make kept from its attach's answer
            assert "externalHookId" in self.mapped, "Make detaches before it attached"
            return self.mapped["externalHookId"]
        if name == "hook_id":
            if self.hook_id is None:
                raise AssertionError("an id is used before any subscribe answered one")
            return self.hook_id
        return getattr(self, name)

    def fill(self, text: str) -> str:
        def template(match: re.Match) -> str:
            name = match.group(1).strip()
            if name not in TEMPLATES:
                raise UnparsedRequest(f"an unknown template {{{{{name}}}}} in {text!r}")
            return self.value(TEMPLATES[name])

        text = text.replace(KEY, self.key).replace(SLUG, self.slug)
        text = re.sub(r"\{\{([^}]*)\}\}", template, text)
        # The id a subscribe answered: "{_id}", or an id elided as "5f0c…-…-…".
        return re.sub(r"\{_id\}|[^/?\s]*…[^/?\s]*", lambda _m: self.value("hook_id"), text)

    def fill_body(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {name: self.fill_body(item) for name, item in value.items()}
        if isinstance(value, list):
            return [self.fill_body(item) for item in value]
        if isinstance(value, str):
            filled = self.fill(value)
            parts = urlsplit(filled)
            if parts.scheme == "https" and parts.netloc != ADDRESS:
                return self.receiver + parts.path  # the tool's own URL: the receiver
            return filled
        return value


def replay(request: Documented, stage: Stage):
    """Send ``request`` as written; returns the test client's answer."""
    headers = {name.lower(): value for name, value in request.headers.items()}
    if "host" in headers:
        assert headers.pop("host") == ADDRESS, f"{request.where}: another host"
    if not request.exact:  # the doc's short form: the dashboard's API, signed in
        headers.setdefault("content-type", "application/json")
        headers.setdefault("authorization", stage.session)
    content_type = headers.pop("content-type", None)
    meta = {f"HTTP_{name.upper().replace('-', '_')}": stage.fill(value)
            for name, value in headers.items()}
    data = b"" if request.body is None else json.dumps(stage.fill_body(request.body)).encode()
    kwargs = {"content_type": content_type} if content_type else {}
    return CommitClient().generic(request.method, stage.fill(request.target), data, **kwargs,
                                  **meta)


def dotted(value: Any, path: str) -> Any:
    for name in path.split("."):
        assert isinstance(value, dict) and name in value, f"no {path!r} in {value!r}"
        value = value[name]
    return value


def check(request: Documented, answer, stage: Stage) -> None:
    """The answer the doc says; a subscribe's ``_id`` is kept for what follows it."""
    said = f"{request.where}, {request.method} {request.target}"
    assert request.method in EXPECTED_STATUS, f"{said}: no answer is known for this method"
    expected = EXPECTED_STATUS[request.method]
    assert answer.status_code == expected, f"{said}: {answer.status_code} {answer.content!r}"
    path = urlsplit(stage.fill(request.target)).path.rstrip("/")
    if request.method == "DELETE":
        assert answer.content == b""
        assert not Integration.objects.filter(pk=path.rsplit("/", 1)[-1]).exists()
        return
    body = answer.json()
    if (request.method, path) == ("POST", "/api/v1/hooks"):
        for name in SUBSCRIBE_FIELDS:
            dotted(body, name)
        assert body["signingSecret"].startswith("whsec_")
        assert body["events"] == request.body.get("events", ["submission.created"]), said
        stage.hook_id = body["_id"]
    elif path == "/api/v1/hooks/sample":
        assert body, f"{said}: no event, though the form has a submission"
        for event in body:
            for name in EVENT_FIELDS:
                dotted(event, name)
            assert event["type"] == "submission.created"
        assert body[0]["data"]["fields"] == FIELDS
    elif path == "/api/v1/hooks":
        assert isinstance(body, list)
    else:
        dotted(body, "_id")
    for name, template in request.answer_mapping.items():  # Make keeps these from the answer
        taken = re.fullmatch(r"\{\{body\.([\w.]+)\}\}", template)
        assert taken, f"{said}: the answer is mapped with {template!r}"
        stage.mapped[name] = dotted(body, taken.group(1))


@pytest.fixture
def stage(user, form, receiver) -> Stage:
    key = api_key_create(owner=user, name="tool", forms=[str(form.pk)],
                         scopes=["read", "hooks"])[1]
    add_submission(form, FIELDS)  # for the sample
    return Stage(key=key, session=bearer(user), slug=form.slug, receiver=receiver.url)


# The tests

def test_every_http_block_of_the_doc_is_read():
    text = DOC.read_text()

    blocks = [r for r in DOCUMENTED if r.where.endswith("(http block)")]

    assert len(blocks) == text.count("\n```http\n") >= 4
    for tool in ("Zapier", "Make", "n8n"):
        made = [r for r in DOCUMENTED if tool in r.section]
        assert {"POST", "DELETE"} <= {r.method for r in made}, (tool, made)
    assert len([r for r in DOCUMENTED if r.answer_mapping]) == 1  # Make's attach


@pytest.mark.parametrize("section", SECTIONS)
def test_the_documented_requests_get_the_documented_answers(section, stage):
    for request in [r for r in DOCUMENTED if r.section == section]:
        check(request, replay(request, stage), stage)


ZAPIER_SUBSCRIBE = next(r for r in DOCUMENTED if "Zapier" in r.section
                        and r.where.endswith("(http block)") and r.method == "POST")


@pytest.mark.parametrize("edit", [
    {"target": "/api/v1/hook"},
    {"body": {("formID" if name == "formId" else name): value
              for name, value in ZAPIER_SUBSCRIBE.body.items()}},
    {"body": {**ZAPIER_SUBSCRIBE.body, "events": ["submission.create"]}},
    {"headers": {**ZAPIER_SUBSCRIBE.headers, "Content-Type": "text/plain"}},
    {"headers": {"Host": ADDRESS, "Content-Type": "application/json"}},
])
def test_a_request_edited_into_one_the_api_refuses_fails(stage, edit):
    edited = Documented(**{**vars(ZAPIER_SUBSCRIBE), **edit})

    with pytest.raises(AssertionError, match=r"\(http block\), POST \S+: 4\d\d b'"):
        check(edited, replay(edited, stage), stage)


@pytest.mark.parametrize(("block", "says"), [
    ("POST api/v1/hooks HTTP/1.1", "not a request line"),
    ("FETCH /api/v1/hooks HTTP/1.1", "not a request line"),
    ("POST /api/v1/hooks HTTP/1.1\nAuthorization Bearer x", "neither a header nor a body"),
    ("POST /api/v1/hooks HTTP/1.1\nHost: a\n\n{\"url\": ", "the body is not JSON"),
    ("", "not a request line"),
])
def test_a_block_that_cannot_be_read_fails_loudly(block, says):
    with pytest.raises(UnparsedRequest, match=says):
        parse_http(block, "line 1 (http block)", "### Test")


def test_an_unclosed_block_prose_without_a_method_or_an_unknown_template_fails_loudly(stage):
    with pytest.raises(UnparsedRequest, match="never closed"):
        documented_requests("### Tool\n\n```http\nGET /api/v1/hooks HTTP/1.1\n")
    with pytest.raises(UnparsedRequest, match="without a method"):
        documented_requests("### Tool\n\nthe URL `https://forms.example.com/api/v1/hooks`\n")
    (named,) = documented_requests(
        "### Tool\n\nmethod GET and URL `https://forms.example.com/api/v1/hooks/{{x.y}}`\n")
    with pytest.raises(UnparsedRequest, match="unknown template"):
        replay(named, stage)
