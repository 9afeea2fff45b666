"""The typed refusal of a loader: a reason code and a message safe to show (never raw exception text)."""

from __future__ import annotations

from insurance_search.documents import DocumentError


class LoadError(DocumentError):
    """A file a loader refuses; `reason` is one of DocumentError's codes or the ones below."""

    ENCRYPTED = "encrypted"
    CORRUPT = "corrupt"
    FORMAT_MISMATCH = "format_mismatch"
    UNSUPPORTED = "unsupported_format"
    TOO_MANY_PAGES = "too_many_pages"
    PAGE_TOO_LARGE = "page_too_large"
    ZIP_BOMB = "zip_bomb"
    XML_ENTITIES = "xml_entities"
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "out_of_memory"
    NO_TEXT = "no_text_layer"
    METADATA = "metadata"
    OCR_FAILED = "ocr_failed"
