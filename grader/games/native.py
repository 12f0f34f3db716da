"""The solvers' optional C extensions (grader._othello_native, grader._gomoku_native), built by
pip install where a C compiler is there: each imported the first time a solver asks for it
(so that importing the games costs no extension's load), or why it cannot be and how to build it."""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

HOW_TO_BUILD = "install a C compiler (e.g. gcc) and reinstall grader (pip install --force-reinstall .)"


class Extension:
    """One C extension by its module's name, imported when first asked for."""

    def __init__(self, name: str):
        self.name = name
        self._module: ModuleType | None = None
        self._reason: str | None = None
        self._tried = False
        self._lock = threading.Lock()  # a thread asking while another imports it waits for that import

    @property
    def module(self) -> ModuleType | None:
        """The extension's module (None: it cannot be imported here)."""
        with self._lock:
            if not self._tried:
                try:
                    self._module = importlib.import_module(self.name)
                except ImportError as e:  # not built: no C compiler at install time, or a broken build
                    self._reason = f"{self.name} could not be imported ({e})"
                self._tried = True
        return self._module

    def available(self) -> bool:
        """True when the extension is importable."""
        return self.module is not None

    def unavailable_reason(self) -> str | None:
        """Why the extension could not be imported (None when it is available)."""
        return None if self.available() else self._reason

    def missing(self) -> str | None:
        """How to build it when it is not built here (None: it is), as a game's solver registry asks."""
        return None if self.available() else HOW_TO_BUILD

    def load(self) -> ModuleType:
        """The extension's module; ImportError saying why when it cannot be imported."""
        module = self.module
        if module is None:
            raise ImportError(self._reason)
        return module
