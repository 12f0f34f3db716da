import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FFO_FILE = ROOT / "fixtures" / "ffo-endgames.txt"  # the public FFO suite, as in shared/data/
sys.path.insert(0, str(Path(__file__).parent))

# The handout's first board, as corrected in shared/spec/endgame-lab.md.
HANDOUT_BOARD = "xxxxxxo.xxxxxo..xxooooooxoxxooooxoxxooooxxxoxoooxxo.oxooxooooooo"
# FFO position 20 (6 empties), from fixtures/ffo-endgames.txt.
FFO20 = "XXXOXXXXOXXXXXXXOOXXXXXXOOOXXXXXOOOXXOO-OOOOO---OOOOOOO-OOOOOOO-"


@pytest.fixture(autouse=True, scope="session")
def private_keys(tmp_path_factory):
    """Run folders' keys go to a folder of the test session, not the user's home."""
    import os

    os.environ["GRADER_KEYS"] = str(tmp_path_factory.mktemp("keys"))


@pytest.fixture
def handout_board() -> str:
    return HANDOUT_BOARD
