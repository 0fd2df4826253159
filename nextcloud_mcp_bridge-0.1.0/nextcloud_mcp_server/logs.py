"""Operational logging: always to stderr (stdout carries the stdio transport), secrets redacted.

The redaction is a safety net, not the plan: code never formats a secret into a log message. The
filter still replaces every configured secret value and anything shaped like an HTTP credential,
so a mistake in a third-party library's message does not leak a password or token.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable

__all__ = ["RedactingFilter", "configure_logging", "neutralise"]

_CREDENTIAL_PATTERNS = (
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(
        r"(?i)\b(access_token|refresh_token|id_token|client_secret|password|code_verifier|code)"
        r"(\"?\s*[=:]\s*\"?)[^\s&\"',}]+"
    ),
)
REDACTED = "[REDACTED]"
# Line breaks and other control characters (C0, DEL, C1, Unicode line/paragraph separators), tab
# excepted: from an IdP's error_description or a file name they would forge log lines.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
# Loggers that print request or statement contents at DEBUG (SQL parameters carry consent ids).
_CONTENT_LOGGERS = ("aiosqlite", "sse_starlette", "mcp.server.streamable_http", "mcp.shared")


def neutralise(text: str) -> str:
    """`text` with every control character written as an escape (\\n, \\x1b, \\u2028...)."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        named = {"\n": "\\n", "\r": "\\r"}.get(char)
        return named or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")

    return _CONTROL.sub(escape, text)


class RedactingFilter(logging.Filter):
    """Rewrites each record's final message with secrets and credential-shaped strings removed."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets: set[str] = set()
        self.add_secrets(secrets)

    def add_secrets(self, secrets: Iterable[str]) -> None:
        self._secrets.update(s for s in secrets if s and len(s) >= 4)

    def redact(self, text: str) -> str:
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        text = _CREDENTIAL_PATTERNS[0].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
        return _CREDENTIAL_PATTERNS[1].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        redacted = neutralise(self.redact(message))
        if redacted != message or record.args:
            record.msg, record.args = redacted, None
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        return True


_filter = RedactingFilter()

# The SDK logs every tool call that ends in a tool error at INFO ("Tool 'x' failed: ..."). Refused
# input, a missing note or a declined approval are answers to the model, not events an operator
# needs; they are demoted to DEBUG. Unexpected exceptions stay at ERROR.
SDK_TOOL_LOGGER = "mcp.server.mcpserver.server"
_TOOL_ERROR_MESSAGES = ("Tool %r failed: %r", "Tool %r rejected arguments: %r")


class _ToolErrorsAtDebug(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO and record.msg in _TOOL_ERROR_MESSAGES:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger().isEnabledFor(logging.DEBUG)
        return True


_tool_errors_at_debug = _ToolErrorsAtDebug()


def configure_logging(level: str, secrets: Iterable[str] = ()) -> RedactingFilter:
    """Send logs to stderr at `level`; quiet chatty libraries; install the redacting filter."""
    _filter.add_secrets(secrets)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_filter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # Request lines from the HTTP stacks are noise at INFO and may carry query strings.
    for noisy in ("httpx", "httpcore", "httpx2", "httpcore2", "aiohttp"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    # User content (note text, tool results, consent ids in SQL parameters) is never logged.
    for chatty in _CONTENT_LOGGERS:
        logging.getLogger(chatty).setLevel(max(logging.INFO, root.level))
    sdk = logging.getLogger(SDK_TOOL_LOGGER)
    sdk.removeFilter(_tool_errors_at_debug)
    sdk.addFilter(_tool_errors_at_debug)
    return _filter
