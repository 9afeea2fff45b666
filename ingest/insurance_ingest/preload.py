"""Imported once by the fork server of `isolation.py`, so that each parse starts with its libraries loaded."""

import docx  # noqa: F401
import pdfplumber  # noqa: F401
import pypdfium2  # noqa: F401
import trafilatura  # noqa: F401

from insurance_ingest import docx_loader, html_loader, pdf_loader  # noqa: F401
