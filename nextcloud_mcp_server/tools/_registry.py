"""How a tool describes itself, once, on itself.

    notes = Toolset("notes")

    @notes.tool(title="Get a note", read_only=True)
    @require_scopes(NOTES_READ)
    async def nc_notes_get_note(note_id: int, ctx: Context) -> NoteDetail: ...

The `ToolSpec` collected here is the single source for registration with the SDK, the MCP tool
annotations, the scopes in `tools/list` `_meta`, permission levels and the README's tool table.
The decorator also turns Nextcloud errors and refused input into tool errors the model can read,
so tool bodies contain no error plumbing, and it is the one place every result of a tool passes
through: an error result leaves it without structured content (`_results.for_every_client`), so
that no refusal can fail the tool's output schema in a strict client.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, Icon, Result, ToolAnnotations
from pydantic import BaseModel

from nextcloud_mcp_server.auth.errors import GrantMissing, OIDCUnavailable
from nextcloud_mcp_server.auth.provisioning import require_provisioning
from nextcloud_mcp_server.auth.scopes import declared_scopes
from nextcloud_mcp_server.icons import icons_for
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NextcloudError
from nextcloud_mcp_server.storage.errors import DecryptionFailed
from nextcloud_mcp_server.tools._approval import ApprovalInterrupt
from nextcloud_mcp_server.tools._apps import AppMissing, app_of, needing
from nextcloud_mcp_server.tools._context import runtime_in
from nextcloud_mcp_server.tools._results import answer, for_every_client
from nextcloud_mcp_server.toolsets._declaration import ToolEntry
from nextcloud_mcp_server.views import ui_meta

__all__ = ["SCOPES_META_KEY", "ToolSpec", "Toolset"]

SCOPES_META_KEY = "nextcloud-mcp/scopes"

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


@dataclass(frozen=True, kw_only=True)
class ToolSpec(ToolEntry):
    """A tool as its module declares it: what the index knows of it (`ToolEntry`), and what
    building it for the SDK needs."""

    fn: Callable[..., Awaitable[Any]]
    description: str
    idempotent: bool
    icons: tuple[Icon, ...] = ()  # the toolset's, light and dark

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title=self.title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=False,
        )

    @property
    def meta(self) -> dict[str, Any]:
        linked = ui_meta(self.view) if self.view else {}
        return {SCOPES_META_KEY: list(self.scopes), **linked}


@dataclass
class Toolset:
    """A named group of tools (`notes`, `calendar`, `files`, `account`).

    Tools of a toolset that reaches Nextcloud (`nextcloud=True`) declare scopes and run only for
    provisioned callers (`@require_provisioning`, a no-op outside offline-access mode). The
    account toolset manages the caller's own authorization and needs neither."""

    name: str
    nextcloud: bool = True
    specs: list[ToolSpec] = field(default_factory=list)
    icons: tuple[Icon, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.icons = icons_for(self.name)  # every tool of the set shows the set's icon

    def tool(
        self,
        *,
        title: str,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        view: str | None = None,
        asks: bool = False,
    ) -> Callable[[F], F]:
        if read_only and destructive:
            raise ValueError("a tool cannot be both read-only and destructive")

        def register(fn: F) -> F:
            scopes = declared_scopes(fn)
            if self.nextcloud and not scopes:
                raise ValueError(f"{fn.__name__} must declare its scopes with @require_scopes")
            inner = require_provisioning(fn) if self.nextcloud else fn
            app = app_of(self.name)  # a toolset of a Nextcloud app: only for users who have it
            wrapped = _readable_errors(needing(app, inner) if app is not None else inner)
            self.specs.append(
                ToolSpec(
                    name=fn.__name__,
                    fn=wrapped,
                    title=title,
                    description=inspect.cleandoc(fn.__doc__ or title),
                    toolset=self.name,
                    scopes=scopes,
                    read_only=read_only,
                    destructive=destructive,
                    idempotent=idempotent or read_only,
                    icons=self.icons,
                    view=view,
                    asks=asks,
                )
            )
            return fn

        return register


def _readable_errors(fn: F) -> F:
    """Nextcloud failures and refused input become `ToolError`s: one clear line, no traceback.
    A returned model becomes its `answer` (structured content and compact JSON text); a result
    the tool built, or an approval's refusal, is passed on as every client can take it."""

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            runtime = runtime_in(kwargs)
            if runtime is not None:
                runtime.startup_check.first_call()  # beside this call, when not done at start
            result = await fn(*args, **kwargs)
            if runtime is not None:
                runtime.startup_check.nextcloud_answered()
            if isinstance(result, CallToolResult):
                return for_every_client(result)
            if isinstance(result, BaseModel) and not isinstance(result, Result):
                return answer(result)  # a tool's own model
            return result
        except NextcloudError as exc:
            runtime = runtime_in(kwargs)
            found = await runtime.startup_check.words_for_a_failure() if runtime is not None else None
            if found:  # the start's words carry the advice; this call's reason without its own copy
                reason = exc.message.split(";", 1)[0]
                raise ToolError(f"{found} (found when this server started; this call: {reason})") from exc
            raise ToolError(str(exc)) from exc
        except InvalidInput as exc:
            raise ToolError(f"invalid input: {exc}; nothing was changed") from exc
        except AppMissing as exc:
            raise ToolError(str(exc)) from exc
        except OIDCUnavailable as exc:
            raise ToolError(f"the identity provider cannot be reached: {exc}") from exc
        except GrantMissing as exc:
            raise ToolError(
                "access to your Nextcloud was revoked or has expired; ask again to reconnect"
            ) from exc
        except ApprovalInterrupt as exc:
            refused = exc.result
            return for_every_client(refused) if isinstance(refused, CallToolResult) else refused
        except DecryptionFailed as exc:
            raise ToolError(
                f"your stored Nextcloud access cannot be read ({exc}); ask your administrator"
            ) from exc

    return call  # type: ignore[return-value]
