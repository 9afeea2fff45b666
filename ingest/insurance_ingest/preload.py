"""Imported once by the fork server of `isolation.py`, so that each parse starts with its libraries loaded."""

import logging

import docx  # noqa: F401
import pdfplumber  # noqa: F401
import pypdfium2  # noqa: F401
import trafilatura  # noqa: F401

from insurance_ingest import docx_loader, html_loader, pdf_loader  # noqa: F401

# A malformed file makes pdfminer and Pillow log a warning per broken object; the refusal says it once.
for name in ("pdfminer", "PIL", "trafilatura", "htmldate", "courlan"):
    logging.getLogger(name).setLevel(logging.ERROR)
