"""The server's words for a model beyond one tool: its instructions, the guide resource, the prompt."""

from __future__ import annotations

from collections.abc import Sequence

INSTRUCTIONS = """\
run-repl runs JavaScript or TypeScript snippets in a sandbox whose only doors are the \
functions of the host {host!r} ({namespaces}). Call `docs` for their TypeScript \
declarations, then `run` a snippet: one snippet can make many calls (Promise.all runs \
them at once) and return just the data you need. Page a large result with \
`expand_result`. Calls that need a person's approval wait for a decision in run-repl \
(up to {wait:g} s); a run still waiting after that is status "interrupted": check it \
with `approval_status`, and never retry the operation another way meanwhile."""

GUIDE = """\
# Writing run-repl snippets

A snippet is the body of an async function, in JavaScript or TypeScript, run in a
fresh QuickJS sandbox. Its only doors are the host's functions: on this server the
host {host!r}, namespaces {namespaces} (see the `docs` tool, or the
`run-repl://host.d.ts` resource, for their declarations).

- Top-level `await` works. The value of an explicit `return`, else of the last
  expression statement, is the result.
- TypeScript types are stripped, not compiled: `enum`, `namespace`, parameter
  properties and decorators are syntax errors (at their line and column).
- Every host call returns a Promise: await it. `Promise.all` runs calls at once.
- Globals: the ECMAScript builtins, `console` (captured, 50 lines inline), `URL`,
  `TextEncoder`, `TextDecoder`, `structuredClone`, `crypto.randomUUID`. No fetch,
  no timers, no require or import, no filesystem. Nothing survives between runs.
- The result is JSON data. A Date becomes its ISO string; convert a Map with
  `Object.fromEntries(map)`, a Set with `[...set]`, a BigInt with `String(n)`.
- A result whose pretty JSON is over 200 lines comes as a window of its leading
  items (`value_window`, `shown` of `total`) with `value_ref`: page the rest with
  `expand_result` (offset = `shown`), or select less in the snippet.
- A host error reaches the snippet as an Error with `code` (and the host's own
  `hostCode`, `details` and `nextActions`, e.g. `e.nextActions[0].command`): catch
  it with try/catch to take another path.
- Calls marked `@approval` ask a person first. The run waits (up to {wait:g} s)
  for the person's decision in run-repl. Approved: the call runs and `run`
  returns the final result. Denied: the awaited call throws an Error with code
  "RUN_APPROVAL_DENIED". Not decided in time: status "interrupted" and
  `approval_ids`; call `approval_status` with the run_id later. Do not retry the
  operation another way: the decision still applies to that run.
- Every failure has `error.code`, `error.message` and one `error.next_actions`
  step. RUN_BUSY: too many runs at once, retry shortly. RUN_TIMEOUT: do less per
  run or pass a larger `timeout_seconds`; calls listed as ok did happen.
"""

PROMPT_TASK = """\
Use run-repl's tools to do this: {task}

Write one `run` snippet that makes the calls it needs (Promise.all for independent
ones) and returns only the data that answers the task. The host's functions:

```ts
{declarations}```

If a call needs a person's approval, say what you asked for and wait for the
result; never try the operation another way.
"""


def namespaces_text(names: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    if len(names) > limit:
        shown += f" and {len(names) - limit} more"
    return shown or "no functions"


def instructions(host: str, names: Sequence[str], wait_s: float) -> str:
    return INSTRUCTIONS.format(host=host, namespaces=namespaces_text(names), wait=wait_s)


def guide(
    host: str, names: Sequence[str], wait_s: float, examples: Sequence[tuple[str, str]]
) -> str:
    text = GUIDE.format(host=host, namespaces=namespaces_text(names, 50), wait=wait_s)
    if examples:
        text += "\n## Examples on this host\n"
        for title, source in examples:
            text += f"\n{title}:\n\n```ts\n{source.rstrip()}\n```\n"
    return text


def task_prompt(task: str, declarations: str) -> str:
    return PROMPT_TASK.format(task=task.strip(), declarations=declarations)


__all__ = ["guide", "instructions", "namespaces_text", "task_prompt"]
