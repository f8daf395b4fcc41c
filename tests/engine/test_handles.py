"""Handles: host objects that are not data, used within one run (the
`const p = await r.project(); await p.functions.list()`)."""

from __future__ import annotations

from typing import Any

import pytest

from run_repl import ValuesError, create_runner, handle, requires_approval, run

SECRET = "s" * 40


class Api:
    def __init__(self) -> None:
        self.made: list[str] = []
        self.deployed: list[tuple[str, str]] = []
        self.seen: list[Any] = []

    def hosts(self) -> dict[str, Any]:
        api = self

        @handle
        class Functions:
            def __init__(self, project_id: str) -> None:
                self.project_id = project_id

            def list(self) -> list[str]:
                return [f"{self.project_id}/fn-a", f"{self.project_id}/fn-b"]

        @handle
        class Project:
            def __init__(self, project_id: str) -> None:
                self.id = project_id
                self.functions = Functions(project_id)

            async def deploy(self, ref: str) -> dict[str, str]:
                api.deployed.append((self.id, ref))
                return {"project": self.id, "ref": ref}

            def _secret(self) -> str:
                return "never reachable"

        def project(project_id: str) -> Project:
            api.made.append(project_id)
            return Project(project_id)

        def describe(p: Project) -> str:
            api.seen.append(p)
            return f"project {p.id}"

        @requires_approval
        def publish(n: int) -> int:
            return n

        return {"api": {"project": project, "describe": describe}, "docs": {"publish": publish}}


async def test_a_handles_methods_are_called_within_the_run() -> None:
    api = Api()
    result = await run(
        'const p = await api.project("prj_1"); return await p.functions.list()', api.hosts()
    )
    assert result.value == ["prj_1/fn-a", "prj_1/fn-b"]
    assert [c.path for c in result.calls] == ["api.project", "api.project(…).functions.list"]


async def test_a_handle_passed_back_to_the_host_is_its_object() -> None:
    api = Api()
    result = await run(
        'const p = await api.project("prj_2"); return await api.describe(p)', api.hosts()
    )
    assert result.value == "project prj_2"
    assert type(api.seen[0]).__name__ == "Project" and api.seen[0].id == "prj_2"


async def test_a_handle_cannot_leave_the_run() -> None:
    api = Api()
    returned = await run('return { p: await api.project("prj_1") }', api.hosts())
    assert returned.error is not None and returned.error.code == "RUN_VALUE_NOT_SERIALIZABLE"
    assert "a handle (api.project(…))" in returned.error.message and returned.error.path == "$.p"
    logged = await run('console.log(await api.project("prj_1")); 1', api.hosts())
    assert logged.logs[0].text == "[Handle api.project(…)]"


async def test_only_what_the_handle_offers_can_be_called() -> None:
    api = Api()
    result = await run('const p = await api.project("x"); return await p.deplyo("v1")', api.hosts())
    assert result.error is not None and result.error.code == "RUN_UNKNOWN_MEMBER"
    assert result.error.did_you_mean == ["api.project(…).deploy"]
    private = await run('const p = await api.project("x"); return typeof p._secret', api.hosts())
    assert private.error is not None and private.error.code == "RUN_UNKNOWN_MEMBER"


async def test_objects_become_handles_only_when_marked() -> None:
    class Plain:
        pass

    result = await run("await h.make()", {"h": {"make": lambda: Plain()}})
    assert result.error is not None and result.error.code == "RUN_HOST_FUNCTION_ERROR"
    assert "Plain" in result.error.message


async def test_handles_are_not_values() -> None:
    @handle
    class Thing:
        pass

    with pytest.raises(ValuesError, match="handle"):
        await run("1", values={"t": Thing()})


async def test_a_handle_made_before_a_pause_works_after_the_resume() -> None:
    api = Api()
    runner = create_runner(secret=SECRET)
    source = """
    const p = await api.project("prj_9")
    await docs.publish(1)
    return await p.deploy("v2")
    """
    first = await runner.run(source, api.hosts())
    assert first.status == "interrupted" and api.made == ["prj_9"]
    done = await runner.run(
        source,
        api.hosts(),
        continuation=first.continuation,
        resolutions=[{"interruption_id": first.interruptions[0].id, "value": True}],
    )
    assert done.status == "ok", done.error
    assert done.value == {"project": "prj_9", "ref": "v2"}
    assert api.deployed == [("prj_9", "v2")]
    # The call that made the handle was answered from the record, then made again
    # (once) when a live call needed the object.
    assert api.made == ["prj_9", "prj_9"]
    assert [c.path for c in done.calls] == ["api.project", "docs.publish", "api.project(…).deploy"]
    assert done.calls[0].replayed is True
