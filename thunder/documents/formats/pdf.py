"""PDF: the text layer read with pypdfium2, page by page, each line mapped to its page and line. A PDF is never
written back (a PDF would keep the original text under any box drawn over it): its de-identified text is written as
text, DOCX or HWPX. A PDF without a text layer (a scan) is refused.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium

from thunder.documents.formats.base import Extracted, FormatError, Segment

SUFFIX = ".pdf"


def read(path: Path, data: bytes) -> Extracted:
    """The text layer of a PDF, one line per line of each page, pages apart by a blank line."""
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as error:
        if "password" in str(error).lower():
            raise FormatError("encrypted (password-protected)") from None
        raise FormatError(f"corrupt or truncated: not a readable PDF ({error})") from None
    extracted = Extracted(path, SUFFIX, data, "")
    pieces: list[str] = []
    length = 0
    try:
        for number in range(len(document)):
            page = document[number]
            text = page.get_textpage().get_text_range().replace("\r\n", "\n").replace("\r", "\n")
            for line_number, line in enumerate(text.split("\n")):
                if pieces:
                    pieces.append("\n")
                    length += 1
                if line:
                    extracted.segments.append(Segment(length, length + len(line), f"page {number + 1}", line_number, 0))
                pieces.append(line)
                length += len(line)
            pieces.append("\n")
            length += 1
    except pdfium.PdfiumError as error:
        raise FormatError(f"corrupt or truncated: a page cannot be read ({error})") from None
    finally:
        document.close()
    extracted.text = "".join(pieces)
    if not extracted.text.strip():
        raise FormatError("has no text layer (a scan?): refused; run OCR on it first, or give its text")
    return extracted
