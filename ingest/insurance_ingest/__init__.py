"""Document loaders for ingest: Markdown and text, PDF (text layer or scanned), DOCX and HTML.

Used by `agent ingest` only. It is deliberately outside the `insurance_agent` package that the
Lambda layers ship: the parsing libraries (pdfplumber, pdfminer.six, pypdfium2, python-docx,
trafilatura) are imported lazily, in the ingest path, and never by a handler.

    doc = load_file(path)           # a validated insurance_agent Document, or LoadError
    digest = content_hash(path)     # what incremental ingest compares before parsing anything
"""

from insurance_ingest.errors import LoadError
from insurance_ingest.limits import Limits
from insurance_ingest.loader import SUFFIXES, content_hash, load_file

__all__ = ["SUFFIXES", "Limits", "LoadError", "content_hash", "load_file"]
