"""Progress on stderr: the package's one reporter behind every ``verbose``.

A :class:`Progress` is silent unless ``verbose``; when it speaks it writes
to stderr (never stdout, which the command line keeps for data), flushed at
once.  It knows three shapes of progress:

* :meth:`Progress.line`: one line, tagged ``[label]`` when the reporter has
  a label (the neural epochs, the public-data methods' steps);
* :meth:`Progress.stage`: timed stages, one line as each ends with its
  duration and a note (MST: the epsilon spent so far);
* :meth:`Progress.bar`: a tqdm bar (AIM's budget, ``evaluate``'s metrics).

What a line says is the caller's business, and the caller's privacy
argument: a reporter prints what it is given.  This module sits at the
package's ground layer and imports nothing from it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["Progress"]


class Progress:
    """Lines, timed stages or a bar on stderr when ``verbose``; silence otherwise.

    Parameters
    ----------
    verbose : int
        Whether to report at all (any true value does).
    label : str, default=""
        Tags each :meth:`line` as ``[label] ...`` and describes a
        :meth:`bar`; ``""`` prints lines as given.
    stage_note : callable, optional
        Called (only when verbose) as each :meth:`stage` ends; its text
        follows the stage's duration.
    """

    def __init__(self, verbose: bool | int, label: str = "", *,
                 stage_note: Callable[[], str] | None = None) -> None:
        self.verbose = bool(verbose)
        self.label = label
        self.stage_note = stage_note
        self._stage: str | None = None
        self._began = 0.0

    def line(self, message: str) -> None:
        """Print ``message`` (after ``[label] ``) on stderr when verbose.

        Parameters
        ----------
        message : str
        """
        if self.verbose:
            text = f"[{self.label}] {message}" if self.label else message
            print(text, file=sys.stderr, flush=True)

    def stage(self, name: str | None) -> None:
        """End the current stage (printing its line) and begin ``name`` (None: done).

        The line reads ``[label] stage: done in 1.23s`` followed by
        ``, note`` when the reporter has a ``stage_note``.

        Parameters
        ----------
        name : str or None
        """
        now = time.perf_counter()
        if self.verbose and self._stage is not None:
            note = f", {self.stage_note()}" if self.stage_note is not None else ""
            self.line(f"{self._stage}: done in {now - self._began:.2f}s{note}")
        self._stage, self._began = name, now

    def bar(self, iterable: Iterable | None = None, **options: Any) -> Any:
        """A tqdm progress bar on stderr, disabled (printing nothing) when not verbose.

        Parameters
        ----------
        iterable : iterable, optional
            What the bar iterates over; omit it to move the bar by hand.
        **options
            Passed to ``tqdm`` (``total``, ``unit``, ``bar_format``, ...);
            ``desc`` defaults to the label.

        Returns
        -------
        tqdm.tqdm
            Also a context manager that closes the bar.
        """
        from tqdm.auto import tqdm

        options.setdefault("desc", self.label or None)
        return tqdm(iterable, disable=not self.verbose, file=sys.stderr, **options)
