"""An export in progress, under the value panel: which file, a progress bar, and a
Cancel button (escape in the panel cancels too).

The export runs in a worker thread (`ExportJob.run`, page by page from the store):
the thread touches no widget, it posts `Progressed` (at most every PROGRESS_EVERY_S)
and `ExportFinished` messages, and this bar shows them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Label, ProgressBar
from textual.worker import Worker, get_current_worker

from ....present.export import ExportCancelled, describe_error, format_of, steps
from ....sandbox.wire.result_store import ResultRefNotFound
from .model import GONE, ExportJob

PROGRESS_EVERY_S = 0.1
FORMAT_NAMES = {"json": "JSON", "jsonl": "JSON Lines", "csv": "CSV"}


@dataclass
class ExportFinished(Message):
    """An export ended: `error` says why it failed (one line), `cancelled` that the person
    stopped it, else `items` were written to `path`."""

    path: str
    items: int
    error: str | None = None
    cancelled: bool = False


class ExportProgress(Vertical):
    """The running export's file, progress bar and Cancel button (hidden when none runs)."""

    DEFAULT_CSS: ClassVar[str] = """
    ExportProgress {
        display: none;
        height: 2;
        background: $panel;
        &.-running { display: block; }
        #export-label { width: 1fr; padding: 0 1; color: $text-accent; text-wrap: nowrap; text-overflow: ellipsis; }
        Horizontal { height: 1; }
        ProgressBar { width: 1fr; padding: 0 1; }
        ProgressBar Bar { width: 1fr; }
        Button { min-width: 8; height: 1; border: none; padding: 0 1; margin: 0; }
    }
    """

    @dataclass
    class Progressed(Message):
        """`done` of `of` items are exported."""

        done: int
        of: int

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._label = Label(id="export-label", markup=False)
        self.bar = ProgressBar(id="export-bar", show_eta=True)
        self._worker: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        yield self._label
        with Horizontal():
            yield self.bar
            yield Button("Cancel", id="export-cancel", variant="error", compact=True)

    @property
    def running(self) -> bool:
        return self._worker is not None and self._worker.is_running

    def start(self, job: ExportJob) -> None:
        """Run `job` in a thread, showing its progress here."""
        fmt = format_of(job.path)
        self._label.update(f"Exporting {FORMAT_NAMES[fmt]} to {job.path}")
        self.bar.update(total=max(1, steps(job.source, fmt)), progress=0)
        self.add_class("-running")
        self._worker = self._export(job)
        self.screen.refresh_bindings()  # escape cancels now

    def cancel(self) -> bool:
        """Stop the running export (its temporary file is removed); False when none runs."""
        if not self.running:
            return False
        assert self._worker is not None
        self._worker.cancel()
        self._label.update("Cancelling the export …")
        return True

    @on(Button.Pressed, "#export-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.cancel()

    @work(thread=True, group="value-export", exit_on_error=False)
    def _export(self, job: ExportJob) -> None:
        # A thread: reads pages and writes, touches no widget, reports by message.
        worker = get_current_worker()
        last = 0.0

        def progress(done: int, of: int) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= PROGRESS_EVERY_S or done >= of:
                last = now
                self.post_message(self.Progressed(done, of))

        target = job.path
        try:
            count = job.run(lambda: worker.is_cancelled, progress)
        except ExportCancelled:
            self.post_message(ExportFinished(str(target), 0, cancelled=True))
        except ResultRefNotFound:
            self.post_message(ExportFinished(str(target), 0, GONE))
        except Exception as error:
            self.post_message(ExportFinished(str(target), 0, describe_error(error, target)))
        else:
            self.post_message(ExportFinished(str(target.resolve()), count))

    @on(Progressed)
    def _progressed(self, event: Progressed) -> None:
        event.stop()
        self.bar.update(total=max(1, event.of), progress=event.done)

    @on(ExportFinished)
    def _finished(self, event: ExportFinished) -> None:
        # Bubbles on to the value panel, which says how it went.
        self.remove_class("-running")
        self._worker = None
        self.screen.refresh_bindings()
