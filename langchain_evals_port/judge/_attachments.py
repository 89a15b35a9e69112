"""``Attachment``: an image, audio clip or PDF for a multimodal judge."""

from __future__ import annotations

import base64
import binascii
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages.content import (
    create_audio_block,
    create_file_block,
    create_image_block,
)

from langchain_evals_port.core.errors import EvaluatorInputError


@dataclass(frozen=True)
class Attachment:
    """Something a judge should look at or listen to, spliced in at ``{attachments}``.

    Build one with ``Attachment.from_url(...)`` or ``Attachment.from_bytes(data, mime_type)``;
    a ready LangChain content block (a dict with a ``type``) is accepted as is wherever an
    attachment is.

    Example:
        >>> Attachment.from_url("https://example.com/cat.png").content_block()["type"]
        'image'
        >>> Attachment.from_bytes(b"%PDF-1.7", "application/pdf").content_block()["mime_type"]
        'application/pdf'
    """

    mime_type: str
    url: str | None = None
    data: bytes | None = None

    @classmethod
    def from_url(cls, url: str, mime_type: str | None = None) -> Attachment:
        """An attachment the provider fetches; the type is guessed from the URL when not
        given, and defaults to an image. A base64 ``data:`` URL becomes an inline attachment
        (a block with a ``base64`` field, as OpenEvals sends it)."""
        inline = _data_url(url)
        if inline is not None:
            return cls(mime_type=mime_type or inline[0], data=inline[1])
        guessed = mime_type or mimetypes.guess_type(url)[0] or "image/*"
        return cls(mime_type=guessed, url=url)

    @classmethod
    def from_bytes(cls, data: bytes, mime_type: str) -> Attachment:
        """An attachment sent inline, base64-encoded."""
        if not isinstance(data, (bytes, bytearray)):
            raise EvaluatorInputError(
                f"Attachment.from_bytes needs bytes, got {type(data).__name__}"
            )
        return cls(mime_type=mime_type, data=bytes(data))

    def content_block(self) -> dict[str, Any]:
        """This attachment as a LangChain standard content block."""
        family = self.mime_type.split("/", 1)[0]
        source: dict[str, Any] = (
            {"url": self.url}
            if self.url is not None
            else {
                "base64": base64.b64encode(self.data or b"").decode(),
                "mime_type": self.mime_type,
            }
        )
        if self.url is not None and "*" not in self.mime_type:
            source["mime_type"] = self.mime_type
        if family == "image":
            return dict(create_image_block(**source))
        if family == "audio":
            return dict(create_audio_block(**source))
        if self.mime_type == "application/pdf":
            return dict(create_file_block(**source))
        raise EvaluatorInputError(
            f"attachments of type {self.mime_type!r} are not supported; "
            "use images (image/*), audio (audio/*) or PDFs (application/pdf)"
        )


def _data_url(url: str) -> tuple[str, bytes] | None:
    # ``data:<mime>[;param...];base64,<payload>`` as (mime, bytes); None for anything else.
    header, comma, payload = url.partition(",")
    if not url.startswith("data:") or not comma or not header.endswith(";base64"):
        return None
    try:
        decoded = base64.b64decode(payload, validate=True)
    except binascii.Error:
        return None
    mime = header[len("data:") :].split(";", 1)[0]
    return mime or "image/*", decoded


def attachment_block(item: Any, index: int) -> dict[str, Any]:
    """A content block from an ``Attachment``, a ready content block, a URL string, or an
    OpenEvals-style ``{"mime_type": ..., "data": ...}`` dict."""
    if isinstance(item, Attachment):
        return item.content_block()
    if isinstance(item, str):
        return Attachment.from_url(item).content_block()
    if isinstance(item, Mapping):
        if "type" in item:
            return dict(item)
        if "mime_type" in item and "data" in item:
            return _openevals_attachment(item["mime_type"], item["data"], index)
    raise EvaluatorInputError(
        f"attachments[{index}] is a {type(item).__name__}; expected an Attachment, a URL, a "
        "content block dict with a 'type', or a dict with 'mime_type' and 'data'"
    )


def _openevals_attachment(mime_type: Any, data: Any, index: int) -> dict[str, Any]:
    if not isinstance(mime_type, str) or not isinstance(data, str):
        raise EvaluatorInputError(
            f"attachments[{index}] needs a string 'mime_type' and a string 'data' (a data: URL "
            "or base64 text)"
        )
    if data.startswith("data:"):
        return Attachment.from_url(data, mime_type).content_block()
    try:
        decoded = base64.b64decode(data, validate=True)
    except binascii.Error as error:
        raise EvaluatorInputError(
            f"attachments[{index}].data is neither a data: URL nor valid base64 ({error})"
        ) from error
    return Attachment(mime_type=mime_type, data=decoded).content_block()
