"""What Nextcloud's error bodies say: the `<s:message>` of a Sabre (WebDAV) error, read safely."""

from __future__ import annotations

from typing import Any
from xml.parsers import expat

__all__ = ["sabre_message"]


def sabre_message(body: str) -> str | None:
    """The `<s:message>` of a Sabre/Nextcloud error body, if there is one (parsed safely)."""
    if "<" not in body:
        return None
    messages: list[str] = []
    capture: list[bool] = [False]
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse(*args: Any) -> None:
        raise ValueError("DTD")

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.StartElementHandler = lambda name, attrs: capture.__setitem__(0, name.endswith(" message"))
    parser.EndElementHandler = lambda name: capture.__setitem__(0, False)
    parser.CharacterDataHandler = lambda text: messages.append(text) if capture[0] else None
    try:
        parser.Parse(body.encode(), True)
    except (expat.ExpatError, ValueError):
        return None
    text = "".join(messages).strip()
    return text or None
