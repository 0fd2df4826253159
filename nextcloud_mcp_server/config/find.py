"""Settings of the find index (`nc_find`): where it is kept, how far documents are read, the
background, finding by meaning, the passages kept in memory and OCR. Part of `Settings`
(`settings.py`); docs/ADR/0071, 0075, 0078, 0084, 0095, 0096.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Self

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings

__all__ = ["FindSettings"]


class FindSettings(BaseSettings):
    # the find index (docs/ADR/0071): its SQLite file (default: beside STORE_PATH; STORE_URL's
    # database when set), the languages PostgreSQL stems, how long a call may index, per-item text
    find_index_path: Path | None = None
    find_languages: str = Field(default="", pattern=r"^[a-z]{2,32}(,[a-z]{2,32}){0,7}$|^$")
    find_sync_seconds: float = Field(default=5.0, gt=0, le=120)
    find_max_bytes_per_item: int = Field(default=256 * 1024, ge=1024, le=256 * 1024)
    # documents (PDF, OOXML, ODF) read for their text (docs/ADR/0075): the largest file read, the
    # pages of a PDF, and the parsing process's wall/CPU seconds and address space
    find_max_document_bytes: int = Field(default=32 * 1024 * 1024, ge=0, le=512 * 1024 * 1024)
    find_max_pages: int = Field(default=500, ge=1, le=100_000)
    find_extract_seconds: int = Field(default=10, ge=1, le=600)
    find_extract_memory_mb: int = Field(default=512, ge=128, le=16_384)
    # background sync (docs/ADR/0084): every this many seconds (0: off), each user's round at most
    # that long, at most that many users at once
    find_background_seconds: float = Field(default=30.0, ge=0, le=3600)
    find_background_round_seconds: float = Field(default=20.0, gt=0, le=600)
    find_background_users_at_once: int = Field(default=2, ge=1, le=64)
    # finding by meaning (docs/ADR/0078): the model inside the wheel, an OpenAI-compatible
    # endpoint (FIND_EMBEDDINGS_URL ending before /embeddings, and its model's name), or off
    find_meaning: Literal["shipped", "endpoint", "off"] = "shipped"
    find_embeddings_url: str | None = None
    find_embeddings_model: str | None = Field(default=None, min_length=1, max_length=200)
    find_embeddings_api_key: SecretStr | None = None
    find_embeddings_timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    # passages' vectors kept in memory between calls (docs/ADR/0095): in all, and per user (a
    # person with more is read from the index each call); 0: none kept
    find_vector_cache_mb: int = Field(default=64, ge=0, le=65_536)
    find_vector_cache_user_mb: int = Field(default=32, ge=0, le=65_536)
    # text of images and scanned PDF pages by tesseract (docs/ADR/0096): off unless asked; its
    # languages (tesseract's names, + between), an image's pixels, pages per document, and the
    # seconds (wall and CPU) a document may take when OCR is on
    find_ocr: bool = False
    find_ocr_languages: str = Field(default="eng", pattern=r"^[A-Za-z_]{3,20}(\+[A-Za-z_]{3,20}){0,7}$")
    find_ocr_max_pixels: int = Field(default=40_000_000, ge=100_000, le=400_000_000)
    find_ocr_max_pages: int = Field(default=20, ge=1, le=1000)
    find_ocr_seconds: int = Field(default=60, ge=1, le=3600)

    @model_validator(mode="after")
    def _endpoint_is_named(self) -> Self:
        if self.find_meaning == "endpoint" and not (self.find_embeddings_url and self.find_embeddings_model):
            raise ValueError(
                "FIND_MEANING=endpoint needs FIND_EMBEDDINGS_URL (e.g. http://localhost:11434/v1) "
                "and FIND_EMBEDDINGS_MODEL (e.g. nomic-embed-text)"
            )
        return self
