"""OCR of a PDF page without a text layer: PDFium renders it, Debian's tesseract reads it.

tesseract runs as a child process with a timeout (fas+eng by default: Persian text with Latin
words and digits). Its output is in logical order already.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from insurance_ingest.errors import LoadError
from insurance_ingest.limits import Limits

PAGE_SECONDS = 90


@lru_cache(maxsize=8)
def available(languages: str) -> bool:
    """tesseract is installed with every language in `languages` ("fas+eng")."""
    exe = shutil.which("tesseract")
    if exe is None:
        return False
    try:
        listed = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=20).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return False
    return all(lang in listed for lang in languages.split("+"))


def ocr_pdf_page(path: Path, index: int, limits: Limits) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        page = pdf[index]
        width, height = page.get_size()
        scale = limits.ocr_dpi / 72
        if width * height * scale * scale > limits.page_pixels:
            raise LoadError(LoadError.PAGE_TOO_LARGE, f"page {index + 1} is too large to render for OCR")
        image = page.render(scale=scale, grayscale=True).to_pil()
    finally:
        pdf.close()
    with tempfile.TemporaryDirectory(prefix="agent-ocr-") as folder:
        png = Path(folder) / "page.png"
        image.save(png)
        return ocr_image(png, limits)


def ocr_image(png: Path, limits: Limits) -> str:
    command = ["tesseract", str(png), "stdout", "-l", limits.ocr_languages, "--psm", "3"]
    try:
        done = subprocess.run(command, capture_output=True, timeout=min(PAGE_SECONDS, limits.seconds),
                              env={"OMP_THREAD_LIMIT": "1", "PATH": "/usr/bin:/bin:/usr/local/bin"})
    except subprocess.TimeoutExpired:
        raise LoadError(LoadError.TIMEOUT, "OCR of a page took too long") from None
    except OSError:
        raise LoadError(LoadError.OCR_FAILED, "tesseract could not be started") from None
    if done.returncode != 0:
        raise LoadError(LoadError.OCR_FAILED, f"tesseract exited with status {done.returncode}")
    return done.stdout.decode("utf-8", "replace")
