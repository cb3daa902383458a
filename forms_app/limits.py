"""The bounds of a form's ``fileUploads`` (contract, "File uploads"). Plain numbers, importable
before Django is set up: the web server's body limit (files/receiving.py's LARGEST_BODY,
read by config/wsgi.py) is made from them."""

MAX_FILE_BYTES = 25 * 1024 * 1024  # 26,214,400: the contract's bound on maxBytes
MAX_FILES = 10
