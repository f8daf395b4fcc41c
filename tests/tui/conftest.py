"""Fixtures of the IDE's tests; the helpers they use are in tui_helpers.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import textual._wait
import textual.constants
import textual.screen
from textual.app import App
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual.pilot import Pilot
from textual.screen import Screen
from tui_helpers import SIZE, make_app, screen_text

from run_repl.present import formats
from run_repl.tui import approvals_inbox
from run_repl.tui.app import RunReplApp
from run_repl.tui.components import approval_prompt

# Pilot waits for "idle" after every key: it sleeps SLEEP_GRANULARITY (20 ms) and calls
# the process idle if it used under SLEEP_IDLE (1 ms) of CPU meanwhile, else sleeps
# again. A screen repaints at most every UPDATE_PERIOD (1/60 s), so a window must
# outlast a repaint; and an idle IDE still polls the store and flushes logs every
# 50 ms, which failed many 5 % windows. Tests type hundreds of keys, so these sleeps
# were half their time. Repaints every 1 ms, and 4 ms windows in which the process
# used under a quarter of a core, say the same thing sooner (the tests wait on the
# states they check, never on the clock).
textual.screen.UPDATE_PERIOD = 0.001
textual._wait.SLEEP_GRANULARITY = 0.004
textual._wait.SLEEP_IDLE = 0.001

# Scrolls and fades jump to their end (TEXTUAL_ANIMATIONS=none, a setting people use
# too): Pilot waits out every animation after a key, repainting each frame, which was
# an eighth of the IDE tests' CPU and ends where a jump does. One test keeps them
# (test_keys_switch_tabs_and_the_active_tab_is_always_in_view).
textual.constants.TEXTUAL_ANIMATIONS = "none"  # type: ignore[misc]

# Every app parses the same CSS (its own and every widget's) for the same theme again,
# about a fifth of starting one. Parsing is a function of the text and the theme's
# variables, so one cache per test process serves every app (Textual keeps one per
# stylesheet; the parsed rules are only read).
_parsed: dict[tuple[Any, ...], list[RuleSet]] = {}
_parse_rules = Stylesheet._parse_rules


def _variables_key(self: Stylesheet) -> frozenset[tuple[str, str]]:
    # Hundreds of variables, hashed for each of the ~500 parses of an app's start (a
    # fortieth of the IDE tests' CPU): made once per variables dict, which Textual only
    # ever replaces (set_variables), never changes in place.
    held = self.__dict__.get("_run_repl_variables_key")
    if held is None or held[0] is not self._variables:
        held = self.__dict__["_run_repl_variables_key"] = (
            self._variables,
            frozenset(self._variables.items()),
        )
    return held[1]


def _parse_rules_once(
    self: Stylesheet, css: str, read_from: Any, *args: Any, **kw: Any
) -> list[RuleSet]:
    key = (css, read_from, args, tuple(sorted(kw.items())), _variables_key(self))
    rules = _parsed.get(key)
    if rules is None:
        rules = _parsed[key] = _parse_rules(self, css, read_from, *args, **kw)
    return rules


Stylesheet._parse_rules = _parse_rules_once  # type: ignore[method-assign]

# A headless app paints every update (the dirty regions, or all of the screen) and then
# drops it, having no terminal: over a third of the IDE tests' CPU went to frames nobody
# saw. The tests see the screen only when they read it (screen_text, the snapshots,
# export_screenshot), and each of those paints it whole, as it is then; so a headless
# update only forgets what it would have painted. The last frame of every run_test is
# still painted (below), so a widget that fails to draw fails its test.
_compositor_refresh = Screen._compositor_refresh


def _compositor_refresh_unpainted(self: Screen[Any]) -> None:
    app = self.app
    if not (app.is_headless and self is app.screen and not app.is_inline):
        _compositor_refresh(self)
        return
    self._compositor._dirty_regions.clear()  # what render_update clears
    self._dirty_widgets.clear()
    app._update_mouse_over(self)


_compositor_refresh_unpainted.__wrapped__ = _compositor_refresh  # type: ignore[attr-defined]
Screen._compositor_refresh = _compositor_refresh_unpainted  # type: ignore[method-assign]
_run_test = App.run_test


@asynccontextmanager
async def _run_test_painting_its_last_frame(
    self: App[Any], *args: Any, **kwargs: Any
) -> AsyncIterator[Pilot[Any]]:
    async with _run_test(self, *args, **kwargs) as pilot:
        yield pilot
        if self.is_running and self.screen_stack:
            screen_text(self)


App.run_test = _run_test_painting_its_last_frame  # type: ignore[method-assign]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RUN_REPL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RUN_REPL_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "data"


@pytest.fixture
def stable(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data directory for snapshots: durations, sizes and approvals' ages are the only
    things that differ from one take to the next, so each has one stand-in."""
    monkeypatch.setattr(formats, "format_ms", lambda ms: "#.# ms")
    monkeypatch.setattr(formats, "format_bytes", lambda n: "#.# MiB")
    monkeypatch.setattr(approvals_inbox, "age_text", lambda created, now=None: "# s")
    return data_dir


@pytest.fixture
def no_arm_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """Approvals take keys at once (the delay has tests of its own)."""
    monkeypatch.setattr(approval_prompt, "ARM_SECONDS", 0.0)


@pytest.fixture
async def app_and_pilot(data_dir: Path) -> AsyncIterator[tuple[RunReplApp, Any]]:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot
