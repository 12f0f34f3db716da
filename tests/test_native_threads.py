"""The C extensions' loader under threads (the executor's job threads make solvers)."""

from __future__ import annotations


def test_an_extension_asked_for_by_two_threads_at_once_is_loaded_for_both(tmp_path, monkeypatch):
    """The executor's job threads may make their first solvers at the same moment: the one that
    asks while the other is importing the extension waits for it, never is told it is missing."""
    import sys
    import threading

    from grader.games.native import Extension

    gate, entered = threading.Event(), threading.Event()
    (tmp_path / "rv_slow_extension.py").write_text(
        "import builtins\nbuiltins._rv_entered.set()\nbuiltins._rv_gate.wait(60)\nVALUE = 42\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("builtins._rv_gate", gate, raising=False)
    monkeypatch.setattr("builtins._rv_entered", entered, raising=False)
    monkeypatch.delitem(sys.modules, "rv_slow_extension", raising=False)
    ext = Extension("rv_slow_extension")
    first: list = []
    importing = threading.Thread(target=lambda: first.append(ext.module))
    importing.start()
    assert entered.wait(60)  # the first thread is inside the import
    second: list = []
    asking = threading.Thread(target=lambda: second.append(ext.module))
    asking.start()
    asking.join(0.5)  # it may wait for the first; it must not answer "missing" meanwhile
    gate.set()
    importing.join(60)
    asking.join(60)
    assert first[0] is not None and first[0].VALUE == 42
    assert second[0] is first[0], "the second thread was told the extension is missing while it was being imported"
    monkeypatch.delitem(sys.modules, "rv_slow_extension", raising=False)


def test_gomokus_solvers_asked_for_by_two_threads_at_once_are_all_there_for_both(tmp_path, monkeypatch):
    """Gomoku's solver modules are imported at its first solver: a thread asking while another
    imports them waits for all of them, never finds only the first one's solver."""
    import sys
    import threading

    from grader.games.gomoku import GOMOKU, Gomoku

    gate, entered = threading.Event(), threading.Event()
    (tmp_path / "rv_first_solver.py").write_text(
        "import builtins\nfrom grader.games.gomoku import Gomoku\nGomoku.add_solver('native', print)\n"
        "builtins._rv_entered.set()\nbuiltins._rv_gate.wait(60)\n"
    )
    (tmp_path / "rv_second_solver.py").write_text(
        "from grader.games.gomoku import Gomoku\nGomoku.add_solver('python', print)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("builtins._rv_gate", gate, raising=False)
    monkeypatch.setattr("builtins._rv_entered", entered, raising=False)
    monkeypatch.setattr(Gomoku, "_solvers", {})
    monkeypatch.setattr(Gomoku, "_loaded", False)
    monkeypatch.setattr(Gomoku, "SOLVER_MODULES", ("rv_first_solver", "rv_second_solver"))
    importing = threading.Thread(target=GOMOKU._backends)
    importing.start()
    assert entered.wait(60)  # the first thread is inside the first module's import
    seen: list = []
    asking = threading.Thread(target=lambda: seen.append(sorted(GOMOKU._backends())))
    asking.start()
    asking.join(0.5)  # it may wait for the first; it must not answer with the first module's solver alone
    gate.set()
    importing.join(60)
    asking.join(60)
    assert seen == [["native", "python"]]
    for name in ("rv_first_solver", "rv_second_solver"):
        monkeypatch.delitem(sys.modules, name, raising=False)
