"""The Tables test table "Trip": one column of each kind, as the tests and the recorder create it."""

from __future__ import annotations

import json

__all__ = ["COLUMNS", "OPTIONS"]

OPTIONS = [{"id": 1, "label": "open"}, {"id": 2, "label": "done"}]
COLUMNS = [
    {"title": "Name", "type": "text", "subtype": "line", "mandatory": True},
    {"title": "Status", "type": "selection", "selectionOptions": json.dumps(OPTIONS)},
    {
        "title": "Tags",
        "type": "selection",
        "subtype": "multi",
        "selectionOptions": json.dumps([{"id": 1, "label": "red"}, {"id": 2, "label": "blue"}]),
    },
    {"title": "Hours", "type": "number", "numberMin": 0, "numberMax": 100, "numberDecimals": 1},
    {"title": "Due", "type": "datetime", "subtype": "date"},
    {"title": "Booked", "type": "selection", "subtype": "check"},
    {"title": "Link", "type": "text", "subtype": "link"},
    {"title": "Notes", "type": "text", "subtype": "long"},
]
