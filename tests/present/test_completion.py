"""Completing host paths from the host's description, and finding the call at the cursor."""

from __future__ import annotations

from run_repl.host.loader import FunctionInfo
from run_repl.present.completion import call_at, complete, parameters, scan, word_before
from run_repl.sandbox.session.host_functions import did_you_mean


def fn(path: str, params: str = "()", *, approval: bool = False, doc: str = "") -> FunctionInfo:
    return FunctionInfo(path, path + params, "()", doc, False, approval)


FUNCTIONS = [
    fn("crm.listAccounts", "(limit?)", doc="All accounts.\nMore."),
    fn("crm.getAccount", "(accountId)", doc="One account."),
    fn("store.listOrders", "(customerId, status?)"),
    fn("documents.publish", "(draftId)", approval=True),
    fn("deep.a.b.run", "(x)"),
]
PATHS = [f.path for f in FUNCTIONS]


def texts(word: str) -> list[str]:
    return [c.text for c in complete(FUNCTIONS, word)]


def test_namespaces_then_their_functions() -> None:
    assert texts("cr") == ["crm."]
    assert texts("") == ["crm.", "deep.", "documents.", "store."]
    assert texts("crm.") == ["crm.getAccount", "crm.listAccounts"]
    assert texts("crm.get") == ["crm.getAccount"]
    assert texts("deep.a.") == ["deep.a.b."]
    first = complete(FUNCTIONS, "crm.l")[0]
    assert (first.kind, first.detail, first.summary) == (
        "function",
        "crm.listAccounts(limit?)",
        "All accounts.",
    )
    namespace = complete(FUNCTIONS, "doc")[0]
    assert namespace.detail == "namespace · 1 function"
    assert complete(FUNCTIONS, "documents.pub")[0].needs_approval


def test_case_insensitive_matches_come_after_exact_ones() -> None:
    assert texts("crm.GETa") == ["crm.getAccount"]


def test_a_name_typed_whole_and_an_unknown_parent_offer_nothing() -> None:
    assert texts("crm.getAccount") == []
    assert texts("nope.x") == [] and texts("nope.") == []


def test_a_mistyped_name_is_offered_what_the_sandbox_would_suggest() -> None:
    for typo in ("crm.getAcount", "crm.listAcounts", "store.lstOrders", "CRM.getAccount"):
        offered = complete(FUNCTIONS, typo)
        assert offered and all(c.close for c in offered)
        assert [c.path for c in offered] == did_you_mean(PATHS, typo)


def test_the_word_before_the_cursor() -> None:
    assert word_before("const a = await crm.get") == "crm.get"
    assert word_before("f().crm.") is None  # a member of something else
    assert word_before("foo(") is None


def test_strings_and_comments_are_not_code() -> None:
    assert scan("const a = 'crm.").in_code is False
    assert scan("// crm.").in_code is False
    assert scan("/* crm. */ crm.").in_code is True
    assert scan("`a ${").in_code is False  # inside a template: not offered


def test_the_call_and_argument_at_the_cursor() -> None:
    found = call_at(FUNCTIONS, "await store.listOrders(id, ")
    assert found is not None and found[0].path == "store.listOrders" and found[1] == 1
    nested = call_at(FUNCTIONS, "await crm.getAccount(f(a, b), [1, 2], ")
    assert nested is not None and nested[1] == 2
    inner = call_at(FUNCTIONS, "store.listOrders(await crm.getAccount(")
    assert inner is not None and inner[0].path == "crm.getAccount"
    assert call_at(FUNCTIONS, "crm.getAccount(x)") is None  # closed
    in_string = call_at(FUNCTIONS, "crm.getAccount('a, b")  # a string argument: still its call
    assert in_string is not None and in_string[1] == 0
    assert call_at(FUNCTIONS, "crm.getAccount(a, // b") is None  # in a comment
    assert call_at(FUNCTIONS, "crm.getAccount(\n  id,\n  ")[1] == 1  # across lines


def test_parameters() -> None:
    assert parameters(FUNCTIONS[2]) == ["customerId", "status?"]
    assert parameters(fn("x.y")) == []
