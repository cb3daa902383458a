"""The HTML form the Setup page hands out, built from the form's field rules, so the browser
asks for what the endpoint will check (contract, "Field rules"): each rule's input type,
``required``, ``maxlength``, ``min``/``max``, a select's options, and a file input that
accepts the types the form keeps when uploads are on. Without rules, an example form."""

from __future__ import annotations

from typing import Any

from django.utils.html import escape

from forms_app.models import Form

INPUT_TYPES = {"text": "text", "email": "email", "number": "number", "url": "url",
               "tel": "tel", "date": "date", "file": "file"}
# Text longer than this gets a textarea (a message), shorter a one-line input (a name).
ONE_LINE_MOST = 200
EXAMPLE = [
    '  <label>Email <input name="email" type="email" required></label>',
    '  <label>Message <textarea name="message"></textarea></label>',
]


def html_snippet(form: Form) -> str:
    """The form's HTML, as text to copy."""
    fields = EXAMPLE if form.field_rules is None else [
        f"  {_field(rule, form.file_uploads)}" for rule in form.field_rules]
    lines = [f'<form action="{escape(form.endpoint)}" method="post" '
             'enctype="multipart/form-data">', *fields]
    if form.honeypot_field:
        lines.append(f'  <input name="{escape(form.honeypot_field)}" style="display:none" '
                     'tabindex="-1" autocomplete="off">')
    lines += ["  <button>Send</button>", "</form>"]
    return "\n".join(lines)


def _field(rule: dict[str, Any], uploads: dict | None) -> str:
    label = escape(rule["name"])
    if rule["type"] == "checkbox":
        return f'<label><input {_attributes(rule, type="checkbox", value="yes")}> {label}</label>'
    if rule["type"] == "select":
        return f"<label>{label} <select {_attributes(rule)}>{_options(rule)}</select></label>"
    if rule["type"] == "text" and rule.get("maxLength", ONE_LINE_MOST + 1) > ONE_LINE_MOST:
        return f"<label>{label} <textarea {_attributes(rule)}></textarea></label>"
    extra: dict[str, Any] = {"type": INPUT_TYPES[rule["type"]]}
    if rule["type"] == "number":
        extra["step"] = "any"  # the endpoint takes any number within the bounds
    if rule["type"] == "file" and uploads:
        extra["accept"] = ",".join(uploads["types"])
    return f"<label>{label} <input {_attributes(rule, **extra)}></label>"


def _attributes(rule: dict[str, Any], **extra: Any) -> str:
    pairs: dict[str, Any] = {"name": rule["name"], **extra}
    if "maxLength" in rule:
        pairs["maxlength"] = rule["maxLength"]
    for key in ("min", "max"):
        if key in rule:
            pairs[key] = rule[key]
    words = [f'{key}="{escape(str(value))}"' for key, value in pairs.items()]
    if rule["required"]:
        words.append("required")
    return " ".join(words)


def _options(rule: dict[str, Any]) -> str:
    choose = '<option value="">Choose…</option>'
    return choose + "".join(f'<option value="{escape(option)}">{escape(option)}</option>'
                            for option in rule["options"])
