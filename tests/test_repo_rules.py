"""Rules about the source tree that CI's tools take on trust.

mypy accepts a `# type: ignore[code]` with no reason, and import-linter's
forbidden contract only forbids what it lists: these keep both honest.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "run_repl"
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def test_every_type_ignore_names_its_code_and_says_why() -> None:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found = IGNORE.search(line)
            if found is None:
                continue
            why = found["rest"].strip()
            if not found["codes"] or not why.startswith("#") or len(why.strip("# ")) < 3:
                bad.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not bad, "each `# type: ignore[code]` needs a short `# why` after it:\n" + "\n".join(bad)


def _modules(package: Path, name: str) -> set[str]:
    found = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.add(".".join((name, *parts)))
    return found


def _covered(module: str, listed: set[str]) -> bool:
    parts = module.split(".")
    return any(".".join(parts[:i]) in listed for i in range(1, len(parts) + 1))


def test_the_child_process_contract_forbids_every_other_module_of_run_repl() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if "child process" in c["name"]]
    child = set(contract["source_modules"])
    allowed = child | {"run_repl", "run_repl.sandbox", "run_repl.sandbox.errors"}
    forbidden = set(contract["forbidden_modules"])
    missing = sorted(
        m
        for m in _modules(PACKAGE, "run_repl") - allowed
        if not _covered(m, forbidden) and not any(m.startswith(c + ".") for c in child)
    )
    assert not missing, (
        "add these to the child-process contract's forbidden_modules in pyproject.toml "
        f"(or to its source_modules if the worker needs them): {missing}"
    )
    assert all(m in _modules(PACKAGE, "run_repl") for m in child)


def test_the_test_extra_installs_what_ci_runs() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    test_extra = " ".join(project["optional-dependencies"]["test"])
    ci = (ROOT / ".ci" / "run").read_text()
    for tool, requirement in (
        ("ruff", "ruff"),
        ("mypy", "mypy"),
        ("lint-imports", "import-linter"),
    ):
        assert tool in ci, f".ci/run does not run {tool}"
        assert requirement in test_extra, f"the test extra does not install {requirement}"


# What the tests install next to themselves (npm packages, the upstream servers' venv,
# bytecode) is not the project's: walking it read 7,000 files, 8 s of the suite.
NOT_OURS = {"node_modules", "__pycache__"}


def _project_files(folder: Path, suffixes: set[str]) -> list[Path]:
    found = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in NOT_OURS and not d.startswith(".")]
        found += [Path(top, f) for f in files if Path(f).suffix in suffixes]
    return sorted(found)


SEED_NAME = re.compile(r"\bseeds?[ _-]?0\d\d\b", re.IGNORECASE)


def test_no_comment_or_docstring_names_a_seed_document_instead_of_the_behaviour() -> None:
    # The seeds are where the product came from; the code says what it does.
    bad = []
    for folder in (PACKAGE, ROOT / "tests", ROOT / "bench"):
        for path in _project_files(folder, {".py", ".js", ".ts", ".md"}):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if SEED_NAME.search(line):
                    bad.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not bad, "say what the behaviour is, not which seed it came from:\n" + "\n".join(bad)


def test_no_test_module_imports_a_conftest_by_name() -> None:
    """`from conftest import x` finds whichever conftest pytest imported last (the tests
    have no packages), so it depends on the collection order: what tests share by import
    lives in a module named for it (tui_helpers, mcp_harness, seeded_data)."""
    by_name = re.compile(r"^(from conftest import|import conftest)\b", re.MULTILINE)
    found = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if "__pycache__" not in path.parts and by_name.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []
