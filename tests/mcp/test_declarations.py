"""The host as TypeScript: what a model reads before writing a snippet."""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from pydantic import BaseModel

from run_repl import JSBigInt, requires_approval, requires_cli
from run_repl.host.loader import LoadedHost
from run_repl.mcp.declarations import declarations
from run_repl.sandbox.session.host_functions import build_manifest


class Line(TypedDict):
    """One line of an order."""

    sku: str
    quantity: int
    note: NotRequired[str]


@dataclass
class Customer:
    id: str
    since: dt.date
    tags: list[str]
    lines: list[Line]


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Settings(BaseModel):
    theme: str = "dark"
    level: int


async def find(id: str, *, verbose: bool = False) -> Customer | None:
    """Find a customer.

    Returns null when there is none. A */ in a docstring cannot end the comment."""
    raise NotImplementedError


def tally(status: Literal["open", "paid"], *ids: str) -> dict[str, int]:
    return {}


def paint(
    color: Color, big: JSBigInt, blob: bytes, opts: dict[Any, str] | None = None
) -> tuple[int, str]:
    return (1, "")


def configure(settings: Settings) -> Settings:
    return settings


def untyped(a, b=1):  # type: ignore[no-untyped-def]
    return a


def broken(x: NoSuchType) -> AlsoMissing:  # type: ignore[name-defined]  # noqa: F821
    return x


@requires_approval
def wipe(scope: str) -> None:
    """Delete everything in scope."""


@requires_cli(command="app rotate-key")
def rotate() -> str:
    return ""


HOST = {
    "crm": {"find": find, "tally": tally, "deep": {"paint": paint}},
    "admin": {"wipe": wipe, "rotate": rotate, "configure": configure, "purge": untyped},
    "misc": {"untyped": untyped, "broken": broken},
}


def declared() -> tuple[str, dict[str, Any]]:
    host = LoadedHost("app:HOST", HOST, build_manifest(HOST))
    modes = {"admin.wipe": "ask", "admin.purge": "deny"}
    text, items = declarations(host, lambda p: modes.get(p, "allow"))
    return text, {d.path: d for d in items}


def test_signatures_follow_the_python_hints() -> None:
    _, items = declared()
    assert items["crm.find"].signature == "crm.find(id: string): Promise<Customer | null>"
    assert (
        items["crm.tally"].signature
        == 'crm.tally(status: "open" | "paid", ...ids: string[]): Promise<Record<string, number>>'
    )
    assert items["crm.deep.paint"].signature == (
        'crm.deep.paint(color: "red" | "blue", big: bigint, blob: Uint8Array, '
        "opts?: Map<unknown, string> | null): Promise<[number, string]>"
    )
    assert (
        items["admin.configure"].signature
        == "admin.configure(settings: Settings): Promise<Settings>"
    )
    assert (
        items["misc.untyped"].signature == "misc.untyped(a: unknown, b?: unknown): Promise<unknown>"
    )
    assert items["misc.broken"].signature == "misc.broken(x: unknown): Promise<unknown>"
    assert items["admin.wipe"].signature == "admin.wipe(scope: string): Promise<null>"


def test_records_become_interfaces_once() -> None:
    text, _ = declared()
    assert text.count("interface Customer {") == 1
    assert "  since: Date;\n  tags: string[];\n  lines: Line[];" in text
    assert "/** One line of an order. */\ninterface Line {" in text
    assert "  note?: string;" in text  # NotRequired
    assert "interface Settings {\n  theme?: string;\n  level: number;\n}" in text


def test_namespaces_nest_and_docs_and_approvals_are_said() -> None:
    text, items = declared()
    assert "declare namespace crm {" in text and "  namespace deep {" in text
    assert "    function paint(" in text
    assert "A *\\/ in a docstring" in text  # cannot close the comment early
    assert "@approval Asks a person to approve each call" in text
    assert "@approval Always denied here" in text
    assert "SECRET_REQUIRES_CLI" in items["admin.rotate"].doc
    assert items["admin.wipe"].approval == "ask" and items["crm.find"].approval == "allow"


def test_part_of_a_host() -> None:
    host = LoadedHost("app:HOST", HOST, build_manifest(HOST))
    text, items = declarations(host, lambda p: "allow", only="crm.deep")
    assert [d.path for d in items] == ["crm.deep.paint"]
    assert "namespace admin" not in text and "interface Customer" not in text
    _, none = declarations(host, lambda p: "allow", only="cr")
    assert none == []  # a prefix of a name is not a namespace
