"""Screenshots checked without an image library: how varied a PNG's rows are."""

from __future__ import annotations

import struct
import zlib


def distinct_rows(data: bytes) -> int:
    """How many distinct rows an 8-bit PNG's decompressed image data holds."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, _, depth, colour_type = struct.unpack(">IIBB", data[16:26])
    assert depth == 8, "only 8-bit PNGs are decoded here"
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour_type]
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        if data[offset + 4 : offset + 8] == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    stride = 1 + width * channels
    # Rows are compared after PNG filtering (filter byte aside): a single-colour image
    # filters to at most two distinct rows whatever the filters, a rendered page to many.
    return len({raw[start + 1 : start + stride] for start in range(0, len(raw), stride)})
