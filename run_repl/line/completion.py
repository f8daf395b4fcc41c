"""Completion at the line REPL: host function paths, and the `:` commands.

`crm.` offers `crm.listAccounts`, `crm.getAccount`, ... with the signature and
the first line of the docstring as meta, from the host's description.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from ..host.loader import FunctionInfo
from ..present.hosts import function_meta

# A dotted name being typed; not one that is itself a member (`x.crm.`).
_DOTTED = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\.?$")


class ReplCompleter(Completer):
    def __init__(self, functions: Sequence[FunctionInfo], commands: Mapping[str, str]) -> None:
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
        for info in self.functions:
            if info.path.startswith(word) and info.path != word:
                yield Completion(
                    info.path,
                    start_position=-len(word),
                    display=info.path,
                    display_meta=function_meta(info),
                )
