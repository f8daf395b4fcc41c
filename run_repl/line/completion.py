"""Completion at the line REPL: host function paths, and the `:` commands.

`crm.` offers `crm.listAccounts`, `crm.getAccount`, ... with the signature and
the first line of the docstring as meta, from the host's description.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

# A dotted name being typed; not one that is itself a member (`x.crm.`).
_DOTTED = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\.?$")


def first_line(doc: str | None) -> str:
    for line in (doc or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def function_meta(item: Mapping[str, Any]) -> str:
    meta = str(item["signature"])
    doc = first_line(item.get("doc"))
    if doc:
        meta += f" — {doc}"
    if item.get("needs_approval"):
        meta += " (needs approval)"
    return meta


class ReplCompleter(Completer):
    def __init__(self, functions: Sequence[Mapping[str, Any]], commands: Mapping[str, str]) -> None:
        self.functions = list(functions)
        self.commands = dict(commands)

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith(":") and " " not in before and "\n" not in before:
            for name, help_text in self.commands.items():
                if name.startswith(before):
                    yield Completion(name, start_position=-len(before), display_meta=help_text)
            return
        match = _DOTTED.search(before)
        if match is None:
            return
        word = match.group()
        for item in self.functions:
            path = str(item["path"])
            if path.startswith(word) and path != word:
                yield Completion(
                    path, start_position=-len(word), display=path, display_meta=function_meta(item)
                )
