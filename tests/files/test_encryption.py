"""Files at rest are sealed (AES-256-GCM, keyed from FIELD_ENCRYPTION_KEYS): the store never
holds the plaintext, a download is the file byte for byte, a changed file is refused, the
re-encryption command moves files to the first key, and files stored in plaintext by 1.1.0
still download."""

from __future__ import annotations

import base64
import hashlib
import os
from io import StringIO

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command
from django.test import Client

from files import links, sealing
from files.models import StoredFile
from files.services import storage
from tests.files.helpers import PDF, post, upload, upload_form

pytestmark = pytest.mark.django_db

# Three and a half chunks, so the chunking (and its last-chunk mark) is what is tested.
LARGE = b"%PDF-1.7\n" + os.urandom(3 * sealing.CHUNK_BYTES + sealing.CHUNK_BYTES // 2)


def new_key() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


@pytest.fixture
def form(user):
    return upload_form(user, maxBytes=len(LARGE))


def stored(public, form, data: bytes = PDF) -> StoredFile:
    assert post(public, form, {"cv": upload("cv.pdf", data)}).status_code == 200
    return StoredFile.objects.get()


def raw(row: StoredFile) -> bytes:
    with storage().open(StoredFile.objects.get(pk=row.pk).key, "rb") as handle:
        return handle.read()


def replace(row: StoredFile, data: bytes) -> None:
    """Write ``data`` where the row's file is, as someone with the disk (or bucket) could."""
    storage().delete(row.key)
    assert storage().save(row.key, ContentFile(data)) == row.key


def fetch(row: StoredFile):
    return Client().get(f"/api/v1/files/{row.pk}?sig={links.signature(row.pk)}")


def download(row: StoredFile) -> bytes:
    response = fetch(row)
    assert response.status_code == 200
    assert response["Content-Length"] == str(row.size)
    return b"".join(response.streaming_content)


def test_the_store_never_holds_the_plaintext(public, form, store):
    row = stored(public, form, LARGE)

    at_rest = raw(row)
    assert at_rest.startswith(sealing.MAGIC)
    assert LARGE[:4096] not in at_rest and LARGE[-4096:] not in at_rest
    assert hashlib.sha256(at_rest).hexdigest() != row.sha256
    assert row.sha256 == hashlib.sha256(LARGE).hexdigest()  # the listed hash is the file's


def test_a_download_is_the_file_byte_for_byte(public, form, store):
    row = stored(public, form, LARGE)

    assert download(row) == LARGE


def test_an_empty_file_is_sealed_and_downloads_empty(public, user, store):
    form = upload_form(user, types=["application/octet-stream"])
    empty = upload("empty.bin", b"", "application/octet-stream")
    assert post(public, form, {"note": empty}).status_code == 200
    row = StoredFile.objects.get()

    assert raw(row).startswith(sealing.MAGIC)
    assert download(row) == b""


@pytest.mark.parametrize("where", [1, len(sealing.MAGIC), sealing.HEADER_BYTES - 1,
                                   sealing.HEADER_BYTES + 5])
def test_a_changed_file_is_refused_not_served(public, form, store, where):
    row = stored(public, form)
    changed = bytearray(raw(row))
    changed[where] ^= 0x01
    replace(row, bytes(changed))

    response = fetch(row)

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_a_file_cut_after_its_first_chunk_is_refused(public, form, store):
    row = stored(public, form, LARGE)
    replace(row, raw(row)[:sealing.HEADER_BYTES + sealing.SEALED_CHUNK_BYTES])

    assert fetch(row).status_code == 404


def test_a_file_cut_further_in_stops_at_the_cut(public, form, store):
    row = stored(public, form, LARGE)
    replace(row, raw(row)[:sealing.HEADER_BYTES + 2 * sealing.SEALED_CHUNK_BYTES])

    response = fetch(row)
    served = b""
    # The first chunk authenticates, so the answer has begun; the read stops at the cut
    # rather than pass a short file off as whole.
    with pytest.raises(sealing.Unreadable):
        for part in response.streaming_content:
            served += part

    assert LARGE.startswith(served) and len(served) <= 2 * sealing.CHUNK_BYTES


def test_a_change_past_the_first_chunk_stops_before_its_bytes(public, form, store):
    row = stored(public, form, LARGE)
    changed = bytearray(raw(row))
    changed[sealing.HEADER_BYTES + sealing.SEALED_CHUNK_BYTES + 10] ^= 0x01
    replace(row, bytes(changed))

    response = fetch(row)
    served = b""
    with pytest.raises(sealing.Unreadable):
        for part in response.streaming_content:
            served += part

    assert LARGE.startswith(served) and len(served) <= sealing.CHUNK_BYTES


def test_a_file_under_a_key_no_longer_configured_is_refused(public, form, store, settings):
    row = stored(public, form)
    settings.FIELD_ENCRYPTION_KEYS = [new_key()]

    assert fetch(row).status_code == 404


def test_rotation_moves_files_to_the_first_key(public, form, store, settings,
                                               django_capture_on_commit_callbacks):
    row = stored(public, form, LARGE)
    old = settings.FIELD_ENCRYPTION_KEYS[0]
    settings.FIELD_ENCRYPTION_KEYS = [new_key(), old]

    with django_capture_on_commit_callbacks(execute=True):
        call_command("rotate_encryption_keys", stdout=(out := StringIO()))

    assert "Files: 0 encrypted (were plaintext), 1 re-encrypted under the first key, " \
           "0 could not be re-encrypted" in out.getvalue()
    settings.FIELD_ENCRYPTION_KEYS = settings.FIELD_ENCRYPTION_KEYS[:1]  # the old key dropped
    moved = StoredFile.objects.get()
    assert store.keys() == [moved.key] and moved.key != row.key
    assert download(moved) == LARGE


def test_a_plaintext_file_from_1_1_0_downloads_and_rotation_seals_it(public, form, store):
    row = stored(public, form)
    replace(row, PDF)  # as 1.1.0 stored it

    assert download(row) == PDF

    call_command("rotate_encryption_keys", stdout=(out := StringIO()))

    assert "Files: 1 encrypted (were plaintext)" in out.getvalue()
    sealed = StoredFile.objects.get()
    assert raw(sealed).startswith(sealing.MAGIC) and PDF not in raw(sealed)
    assert download(sealed) == PDF
    assert store.keys() == [sealed.key]


def test_rotation_leaves_files_under_the_first_key_alone(public, form, store):
    row = stored(public, form)

    call_command("rotate_encryption_keys", stdout=(out := StringIO()))

    assert "Files: 0 encrypted (were plaintext), 0 re-encrypted" in out.getvalue()
    assert StoredFile.objects.get().key == row.key


def test_rotation_counts_and_keeps_a_file_it_cannot_open(public, form, store, settings):
    row = stored(public, form)
    changed = bytearray(raw(row))
    changed[-1] ^= 0x01
    replace(row, bytes(changed))
    settings.FIELD_ENCRYPTION_KEYS = [new_key(), *settings.FIELD_ENCRYPTION_KEYS]

    call_command("rotate_encryption_keys", stdout=(out := StringIO()))

    assert "0 re-encrypted under the first key, 1 could not be re-encrypted" in out.getvalue()
    assert StoredFile.objects.get().key == row.key and store.keys() == [row.key]
    assert raw(row) == bytes(changed)


def test_a_changed_plaintext_file_from_1_1_0_is_refused_and_never_sealed(public, form, store):
    row = stored(public, form)
    replace(row, PDF[:-1] + b"!")  # not the file whose sha256 is listed

    assert fetch(row).status_code == 404

    call_command("rotate_encryption_keys", stdout=(out := StringIO()))

    assert "Files: 0 encrypted (were plaintext)" in out.getvalue()
    assert "1 could not be re-encrypted" in out.getvalue()
    assert raw(row) == PDF[:-1] + b"!"
