"""Numbers read from text or JSON another party wrote (docs/ADR/0114): ASCII digits only, bounded,
finite, never a crash; and no module of the package tests digits any other way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nextcloud_mcp_server.nextcloud.dav.webdav import _total_size
from nextcloud_mcp_server.nextcloud.dav.xml import status_code
from nextcloud_mcp_server.numbers import (
    MAX_DIGITS,
    ascii_digits,
    ascii_number,
    json_number,
    json_whole,
    lifetime,
)
from nextcloud_mcp_server.toolsets.tables.tools_rows import resolve
from nextcloud_mcp_server.toolsets.tables.values import InvalidTableInput, TableColumn

PACKAGE = Path(__file__).resolve().parents[1] / "nextcloud_mcp_server"
DIGIT_TESTS = {"isdigit", "isdecimal", "isnumeric"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("42", 42),
        ("007", 7),
        ("9" * MAX_DIGITS, int("9" * MAX_DIGITS)),
        ("9" * (MAX_DIGITS + 1), None),
        ("9" * 5000, None),  # int() refuses more than 4,300 digits
        ("²", None),  # isdigit() takes it, int() refuses it
        ("1²", None),
        ("①", None),
        ("٣", None),  # Arabic-Indic three: int() reads 3, which the text does not show in ASCII
        ("\uff13", None),  # full-width three
        ("", None),
        (None, None),
        (" 5", None),
        ("5\n", None),
        ("1_000", None),
        ("+5", None),
        ("-5", None),
        ("5.0", None),
    ],
)
def test_only_ascii_digits_within_the_bound_are_a_number(text: str | None, expected: int | None) -> None:
    assert ascii_number(text) == expected
    assert ascii_digits(text) is (expected is not None)


@pytest.mark.parametrize(
    ("text", "expected"), [("-5", -5), ("5", 5), ("--5", None), ("-", None), ("-²", None), ("+5", None)]
)
def test_a_signed_number_takes_one_leading_minus(text: str, expected: int | None) -> None:
    assert ascii_number(text, signed=True) == expected


def test_the_bound_is_the_caller_s() -> None:
    assert ascii_number("200", max_digits=3) == 200
    assert ascii_number("2000", max_digits=3) is None
    assert not ascii_digits("12345", max_digits=4)


@given(st.text(max_size=30) | st.text(alphabet="-0123456789²٣", max_size=25))
def test_any_text_is_the_number_its_ascii_digits_write_or_none(text: str) -> None:
    number = ascii_number(text, signed=True)
    digits = text.removeprefix("-")
    plain = 0 < len(digits) <= MAX_DIGITS and all("0" <= c <= "9" for c in digits)
    assert (number is not None) is plain
    if number is not None:
        assert number == int(text)


def test_a_dav_status_line_with_other_digits_has_no_code() -> None:
    assert status_code("HTTP/1.1 200 OK") == 200
    assert status_code("HTTP/1.1 ²00 OK") is None  # raised ValueError from the listing before
    assert status_code("HTTP/1.1 2000 OK") is None


def test_a_file_size_in_other_digits_is_unknown() -> None:
    assert _total_size({"content-range": "bytes 0-9/1234"}, 206) == 1234
    assert _total_size({"content-range": "bytes 0-9/12²"}, 206) is None  # raised ValueError before
    assert _total_size({"content-length": "9" * 5000}, 200) is None


def test_no_module_tests_digits_but_the_number_reader() -> None:
    """`str.isdigit()` and its kin are no test for `int()`: every number is read by `numbers`."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "numbers.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in DIGIT_TESTS:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} .{node.attr}")
    assert not found, found


def test_a_tables_column_named_in_other_digits_is_no_column_id() -> None:
    columns = [TableColumn(id=3, title="Price"), TableColumn(id=7, title="Name")]
    assert resolve(columns, "3").title == "Price"
    assert resolve(columns, " 7 ").title == "Name"
    for key in ("٣", "3²"):  # taken for column 3, or raised ValueError, before
        with pytest.raises(InvalidTableInput, match="no column"):
            resolve(columns, key)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5, 5.0),
        (2.5, 2.5),
        ("3600", 3600.0),
        ("3600.5", None),
        (True, None),
        (None, None),
        ([1], None),
        (float("nan"), None),
        (float("inf"), None),
        (-float("inf"), None),
        (10**400, None),  # float() refuses it
    ],
)
def test_a_json_number_is_finite_and_no_bool(value: object, expected: float | None) -> None:
    assert json_number(value) == expected


def test_a_lifetime_that_is_no_number_is_the_default_and_never_negative() -> None:
    assert lifetime(3600, 300) == 3600.0
    assert lifetime("60", 300) == 60.0
    assert lifetime(float("nan"), 300) == 300.0  # made the refresh's int() raise before
    assert lifetime(float("inf"), 300) == 300.0
    assert lifetime("soon", 300) == 300.0  # made float() raise before
    assert lifetime(None, 3600) == 3600.0
    assert lifetime(-5, 300) == 0.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, 3),
        (-3, -3),
        ("3", 3),
        ("-3", -3),
        (10**30, 10**30),
        (True, None),
        (3.0, None),
        (1e400, None),
        ("x", None),
        (None, None),
        ([3], None),
    ],
)
def test_a_json_whole_number_is_an_int_or_digits_and_no_bool_or_float(
    value: object, expected: int | None
) -> None:
    assert json_whole(value) == expected
