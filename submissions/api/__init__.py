"""The owner's API of submissions: a form's submissions (form_submissions.py) and erasure by
address (erasures.py). The public POST is intake's."""
