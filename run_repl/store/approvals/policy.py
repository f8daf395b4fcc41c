"""Who may decide which approvals: a namespace's approvals restricted to named people.

    # config.toml
    [approvals]
    name = "alice"                           # who you are in the audit
    [approvals.deciders]
    "bank" = ["alice", "bob"]                # bank.* approvals: only they decide
    "documents.publish" = ["carol"]
    "*" = ["ops"]                            # every other approval

The rule of the longest namespace that holds an approval's path applies
(`bank.transfer` is in `bank`); no rule, anyone may decide. Names compare
without case. The flow checks it before anything is recorded, on every store.

What it is: an agreement the team's run-repl keeps, with each decision's
name in the audit (`decided_by`). What it is not: authentication; a name is
what the person's config or OS account says. On a shared server, who can
write the store at all is the server's business (its roles and passwords).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..records import ApprovalRefused, PendingApproval

ANY_NAMESPACE = "*"


def _in(path: str, namespace: str) -> bool:
    return namespace == ANY_NAMESPACE or path == namespace or path.startswith(namespace + ".")


@dataclass(frozen=True)
class Deciders:
    """Namespace (a host path prefix, or "*") -> the names who may decide its approvals."""

    rules: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def rule_for(self, path: str) -> tuple[str, tuple[str, ...]] | None:
        """The namespace whose rule applies to `path`, and its names; None: no rule."""
        matching = [ns for ns in self.rules if _in(path, ns)]
        if not matching:
            return None
        # The most specific: the longest namespace, "*" last of all.
        best = max(matching, key=lambda ns: -1 if ns == ANY_NAMESPACE else len(ns))
        return best, tuple(self.rules[best])

    def may_decide(self, name: str, path: str) -> bool:
        rule = self.rule_for(path)
        return rule is None or name.casefold() in {n.casefold() for n in rule[1]}

    def check(self, name: str, approvals: Iterable[PendingApproval]) -> None:
        """ApprovalRefused naming the rule when `name` may not decide one of `approvals`."""
        for a in approvals:
            rule = self.rule_for(a.path)
            if rule is not None and not self.may_decide(name, a.path):
                namespace, names = rule
                where = "every approval" if namespace == ANY_NAMESPACE else f"{namespace!r}"
                raise ApprovalRefused(
                    f"{name} may not decide approval {a.id} ({a.path}): the approvals policy "
                    f"([approvals.deciders] {where}) names {', '.join(names) or 'nobody'}. "
                    "Nothing was recorded; ask one of them."
                )


__all__ = ["ANY_NAMESPACE", "Deciders"]
