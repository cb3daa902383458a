"""The field rules a bench's form checks with ``--rules N`` (the first N; contract, "Field
rules"). The first four check what the benches send (name, email, message and a reference);
the rest name fields they leave out, as a real form's optional fields."""

RULES = [
    {"name": "name", "type": "text", "required": True, "maxLength": 200},
    {"name": "email", "type": "email", "required": True, "maxLength": 320},
    {"name": "message", "type": "text", "required": True, "maxLength": 5000},
    {"name": "ref", "type": "text", "maxLength": 100},
    {"name": "phone", "type": "tel"},
    {"name": "age", "type": "number", "min": 0, "max": 150},
    {"name": "website", "type": "url"},
    {"name": "day", "type": "date", "min": "2020-01-01"},
    {"name": "newsletter", "type": "checkbox"},
    {"name": "topic", "type": "select", "options": ["Sales", "Support", "Other"]},
]
