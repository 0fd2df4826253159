"""Reading the recorded exchanges with a real Nextcloud in `tests/fixtures/nextcloud/`.

Each file holds one exchange: `### REQUEST: METHOD URL`, the curl arguments (`### ARG:` lines,
pairs like `-H` + `Name: value`, `--data` + body, `-u` + credentials), `### RESPONSE:`, then the raw
status line, headers and body. Files without a request part hold only the response.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["APPS", "FIXTURES", "FIXTURES_34", "Recording", "load", "load_app"]

FIXTURES = Path(__file__).parent / "fixtures" / "nextcloud"  # Nextcloud 29.0.6, Notes 4.13.1
# Nextcloud 34.0.1 (Notes 6.0.2): the sequences of record_nextcloud.py and record_more.py again
FIXTURES_34 = Path(__file__).parent / "fixtures" / "nextcloud34"
# The app APIs (Talk, Collectives) of the kit's 29 and 34 with `--apps all`: apps/29, apps/34
APPS = Path(__file__).parent / "fixtures" / "apps"


@dataclass
class Recording:
    name: str
    method: str | None
    path: str | None  # path + query of the request
    request_headers: dict[str, str] = field(default_factory=dict)
    request_body: str | None = None
    basic_auth: bool = False
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names; last value wins
    body: str = ""

    def json(self) -> Any:
        return json.loads(self.body)


def load(name: str, version: str = "29") -> Recording:
    """A recorded exchange of Nextcloud 29 (or of 34, `version="34"`)."""
    return _parse(
        name, ((FIXTURES_34 if version == "34" else FIXTURES) / f"{name}.txt").read_text(encoding="utf-8")
    )


def load_app(name: str, version: str) -> Recording:
    """A recorded exchange with an app of Nextcloud `version` ("29" or "34"), tests/record_apps.py."""
    return _parse(name, (APPS / version / f"{name}.txt").read_text(encoding="utf-8"))


def _parse(name: str, text: str) -> Recording:
    method = path = None
    request_headers: dict[str, str] = {}
    body: str | None = None
    basic = False
    if text.startswith("### REQUEST:"):
        head, _, text = text.partition("### RESPONSE:\n")
        lines = head.split("\n### ARG: ")
        method, url = lines[0].removeprefix("### REQUEST: ").strip().split(" ", 1)
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        args = [a.removesuffix("\n") for a in lines[1:]]
        i = 0
        while i < len(args):
            flag = args[i]
            if flag == "-H":
                name_, _, value = args[i + 1].partition(":")
                request_headers[name_.strip()] = value.strip()
                i += 2
            elif flag in ("--data", "--data-binary"):
                body = args[i + 1]
                i += 2
            elif flag == "-u":
                basic = True
                i += 2
            else:
                i += 1
    status_line, _, rest = text.partition("\n")
    raw_headers, _, response_body = rest.partition("\n\n")
    headers = {}
    for line in raw_headers.splitlines():
        name_, _, value = line.partition(":")
        headers[name_.strip().lower()] = value.strip()
    return Recording(
        name=name,
        method=method,
        path=path,
        request_headers=request_headers,
        request_body=body,
        basic_auth=basic,
        status=int(status_line.split()[1]),
        headers=headers,
        body=response_body,
    )
