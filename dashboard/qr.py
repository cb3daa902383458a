"""QR codes drawn on the page as inline SVG (qrcode's SVG factory, no Pillow): a two-step
sign-in secret never leaves this server to be drawn."""

from __future__ import annotations

import qrcode
import qrcode.image.svg
from django.utils.safestring import SafeString, mark_safe


def qr_svg(text: str) -> SafeString:
    image = qrcode.make(text, image_factory=qrcode.image.svg.SvgPathImage, box_size=8)
    svg = image.to_string(encoding="unicode")
    # Our own markup, made from the text by the library; the text is only ever path data.
    return mark_safe(svg.replace("<svg ", '<svg role="img" aria-label="QR code" ', 1))
