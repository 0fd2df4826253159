"""A sequence of rows whose items are built the first time each is read: a page of a listing of
thousands builds its page (ADR 0110). A subclass says how a row becomes its item (`_build`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar, overload

__all__ = ["BuiltOnRead"]

R = TypeVar("R")
T = TypeVar("T")


class BuiltOnRead(Sequence[T], Generic[R, T]):
    """Items in the order of their rows, each built once, when first read. Read only from the
    event loop's thread."""

    __slots__ = ("_built", "_rows")

    def __init__(self, rows: list[R]) -> None:
        self._rows = rows
        self._built: list[T | None] = [None] * len(rows)

    def _build(self, row: R) -> T:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self._rows)))]
        if not -len(self._rows) <= index < len(self._rows):
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._item(index % len(self._rows))

    def _item(self, i: int) -> T:
        item = self._built[i]
        if item is None:
            item = self._built[i] = self._build(self._rows[i])
        return item
