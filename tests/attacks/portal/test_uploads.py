"""What a student may upload to the portal (grader/portal/uploads.py): a program file, or a .zip
or .tar.gz of a program folder. Each defence meets a real hostile archive, built here byte by
byte where no tool would make it: the refusal is one line naming the problem and the fix, and
nothing is written, neither outside the submission's folder nor in it."""

from __future__ import annotations

import gzip
import io
import os
import socket
import stat
import tarfile
import tempfile
import threading
import warnings
import zipfile
from pathlib import Path

import pytest

from grader.portal.uploads import ArchiveLimits, UploadError, check_upload, command_program, unpack

from portal_server import UPLOAD_KB

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

PROGRAM = b"print('hello')\n"


def zip_of(*members: tuple[str, bytes] | zipfile.ZipInfo, data: dict[str, bytes] | None = None) -> bytes:
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name: the attack needs one
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            for m in members:
                if isinstance(m, zipfile.ZipInfo):
                    zf.writestr(m, (data or {}).get(m.filename, b""))
                else:
                    zf.writestr(m[0], m[1])
    return out.getvalue()


def tar_of(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            tf.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return out.getvalue()


def tar_member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    return info


def symlink_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def fifo_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFIFO | 0o644) << 16
    return info


def lying_zip() -> bytes:
    """A zip whose central directory says its member unpacks to 10 bytes, when it holds 100,000."""
    data = bytearray(zip_of(("lab.py", b"#" * 100_000)))
    central = data.index(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")
    local = data.index(b"PK\x03\x04")
    data[local + 22 : local + 26] = (10).to_bytes(4, "little")
    return bytes(data)


SMALL = ArchiveLimits(members=10, member_bytes=1000, total_bytes=3000)

HOSTILE = {
    "zip: ../ out of the folder": ("lab.zip", zip_of(("lab.py", PROGRAM), ("../evil.py", PROGRAM)), "climbs out"),
    "zip: ..  deep inside a path": ("lab.zip", zip_of(("lab/../../evil.py", PROGRAM)), "climbs out"),
    "zip: an absolute path": ("lab.zip", zip_of(("/tmp/evil.py", PROGRAM)), "absolute path"),
    "zip: a drive letter": ("lab.zip", zip_of(("C:/evil.py", PROGRAM)), "absolute path"),
    "zip: a backslash": ("lab.zip", zip_of(("..\\evil.py", PROGRAM)), "backslash"),
    "zip: a symbolic link": ("lab.zip", zip_of(("lab.py", PROGRAM), symlink_info("data")), "symbolic link"),
    "zip: a FIFO": ("lab.zip", zip_of(("lab.py", PROGRAM), fifo_info("pipe")), "device or a FIFO"),
    "zip: a name twice": ("lab.zip", zip_of(("lab.py", PROGRAM), ("lab.py", b"import os\n")), "twice"),
    "zip: a file and a folder": ("lab.zip", zip_of(("lab.py", PROGRAM), ("lab.py/x.py", PROGRAM)), "file and a folder"),
    "zip: too many members": ("lab.zip", zip_of(*[(f"m{i}.py", b"") for i in range(11)]), "more than 10 members"),
    "zip: a member too large": ("lab.zip", zip_of(("lab.py", b"#" * 1001)), "more than 0.000953674 MiB"),
    "zip: too large in all": ("lab.zip", zip_of(*[(f"m{i}.txt", os.urandom(900)) for i in range(4)]), "unpacks to more"),
    "zip: a size that lies": ("lab.zip", lying_zip(), "the .zip again"),
    "zip: not a zip": ("lab.zip", b"PK\x03\x04 not really", "not a readable .zip"),
    "tar: ../ out of the folder": ("lab.tar.gz", tar_of((tar_member("../evil.py"), PROGRAM)), "climbs out"),
    "tar: an absolute path": ("lab.tgz", tar_of((tar_member("/etc/evil.py"), PROGRAM)), "absolute path"),
    "tar: a symbolic link": ("lab.tar.gz", tar_of((tar_member("key", tarfile.SYMTYPE, "/etc/passwd"), b"")),
                             "symbolic link"),
    "tar: a hard link": ("lab.tar.gz", tar_of((tar_member("key", tarfile.LNKTYPE, "/etc/passwd"), b"")), "hard link"),
    "tar: a FIFO": ("lab.tar.gz", tar_of((tar_member("pipe", tarfile.FIFOTYPE), b"")), "device or a FIFO"),
    "tar: a device": ("lab.tar.gz", tar_of((tar_member("null", tarfile.CHRTYPE), b"")), "device or a FIFO"),
    "tar: a name twice": ("lab.tar.gz", tar_of((tar_member("lab.py"), PROGRAM), (tar_member("lab.py"), PROGRAM)),
                          "twice"),
    "tar: too many members": ("lab.tar.gz", tar_of(*[(tar_member(f"m{i}.py"), b"") for i in range(11)]),
                              "more than 10 members"),
    "tar: a member too large": ("lab.tar.gz", tar_of((tar_member("lab.py"), b"#" * 1001)), "more than 0.000953674"),
    "tar: not whole": ("lab.tar.gz", tar_of((tar_member("lab.py"), os.urandom(2000)))[:-100], "not a whole .tar.gz"),
    "a file no lab runs": ("notes.txt", b"my notes\n", "not a program the lab runs"),
}  # fmt: skip


@pytest.mark.parametrize("name, content, message", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_upload_is_refused_in_one_line_before_anything_is_written(tmp_path, name, content, message):
    folder, outside = tmp_path / "submission", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    with pytest.raises(UploadError, match=message) as refused:
        unpack(name, content, folder, limits=SMALL)
    text = str(refused.value)
    assert "\n" not in text and ": " in text  # the problem, then the fix
    assert list(folder.iterdir()) == [] and list(outside.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "submission"]
    with pytest.raises(UploadError, match=message):
        check_upload(name, content, limits=SMALL)


def test_a_zip_bomb_is_refused_by_its_ratio_and_never_unpacked_whole(tmp_path):
    bomb = zip_of(("lab.py", PROGRAM), ("data.txt", b"\0" * (4 * 2**20)))  # 4 MiB of zeros in ~4 KiB
    with pytest.raises(UploadError, match=r"times its size \(a zip bomb's ratio; at most 100\)"):
        unpack("lab.zip", bomb, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_gzip_bomb_is_refused_while_it_is_unpacked(tmp_path):
    bomb = gzip.compress(b"\0" * (64 * 2**20), 9)  # 64 MiB in ~64 KiB: refused past its first MiB
    with pytest.raises(UploadError, match="zip bomb's ratio"):
        unpack("lab.tar.gz", bomb, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_an_archive_over_the_total_is_refused_by_the_sizes_it_declares(tmp_path):
    big = ArchiveLimits(total_bytes=2 * 2**20, ratio=10**6)
    archive = zip_of(*[(f"m{i}.bin", b"\0" * 2**20) for i in range(3)])
    with pytest.raises(UploadError, match="unpacks to more than 2 MiB"):
        unpack("lab.zip", archive, tmp_path, limits=big)


def test_an_archive_of_a_program_folder_is_unpacked_inside_the_submissions_folder(tmp_path):
    main = zipfile.ZipInfo("lab/run")
    main.external_attr = (stat.S_IFREG | 0o755) << 16
    archive = zip_of(("lab/", b""), ("lab/helper.txt", b"data\n"), main, data={"lab/run": b"#!/bin/sh\necho hi\n"})
    sub = unpack("lab.zip", archive, tmp_path)
    assert sub.path == tmp_path / "run" and sub.folder == tmp_path  # its one top folder taken away
    assert os.access(sub.path, os.X_OK) and (tmp_path / "helper.txt").read_text() == "data\n"
    assert not os.access(tmp_path / "helper.txt", os.X_OK)


def test_the_program_of_an_archive_holding_several_is_the_one_config_entry_names(tmp_path):
    archive = tar_of((tar_member("Gomoku.py"), PROGRAM), (tar_member("solver.py"), PROGRAM))
    with pytest.raises(UploadError, match=r"holds 2 programs at its top \(Gomoku.py, solver.py\)"):
        check_upload("lab.tar.gz", archive)
    check_upload("lab.tar.gz", archive, entry="Gomoku.py")
    assert unpack("lab.tar.gz", archive, tmp_path, entry="Gomoku.py").path == tmp_path / "Gomoku.py"
    with pytest.raises(UploadError, match="holds no program at its top"):
        check_upload("lab.zip", zip_of(("notes.txt", b"")))


@pytest.mark.parametrize("name, content, written, executable", [
    ("My Lab.py", PROGRAM, "submission.py", False),
    ("lab.jl", b"println(1)\n", "submission.jl", False),  # a suffix config.yaml's commands: runs
    ("engine", b"#!/bin/sh\necho hi\n", "submission", True),
    ("../../evil.py", PROGRAM, "submission.py", False),
])  # fmt: skip
def test_a_single_program_file_is_written_under_the_graders_name(tmp_path, name, content, written, executable):
    sub = unpack(name, content, tmp_path, commands={".jl": "julia {script}"})
    assert sub.path == tmp_path / written and sub.single
    assert [p.name for p in tmp_path.iterdir()] == [written]
    assert os.access(sub.path, os.X_OK) == executable


@pytest.mark.parametrize("command, message", [
    ("python3 lab.py\nmore", "COMMAND must be one line, the command that starts your program in its folder"),
    ("ls -l", "COMMAND names none of the archive's files (it holds helper.py, lab.py): name your program's, like "
              "./engine, or python3 engine.py"),
    ("no-such-program lab.py", "COMMAND: engine program 'no-such-program' is not an installed program"),
    ("./missing", "COMMAND: engine program './missing' not found in the archive"),
    ("python3 'lab.py", "COMMAND: engine command \"python3 'lab.py\": No closing quotation: fix its quotes"),
])  # fmt: skip
def test_a_gtp_programs_command_file_names_one_of_its_files(tmp_path, command, message):
    archive = zip_of(("lab.py", PROGRAM), ("helper.py", PROGRAM), ("COMMAND", command.encode()))
    with pytest.raises(UploadError) as refused:
        check_upload("lab.zip", archive, gtp=True)
    assert str(refused.value).startswith(message), str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_command_file_starts_a_gtp_program_and_is_refused_for_a_script_lab(tmp_path):
    archive = zip_of(("lab/Gomoku.py", PROGRAM), ("lab/board.py", PROGRAM), ("lab/COMMAND", b"python3 Gomoku.py -q\n"))
    check_upload("lab.zip", archive, gtp=True)
    sub = unpack("lab.zip", archive, tmp_path)
    assert sub.path == tmp_path / "Gomoku.py" and sub.folder == tmp_path
    program = command_program(tmp_path)
    assert program is not None and program.protocol == "gtp" and program.argv[1:] == ("{dir}/Gomoku.py", "-q")
    with pytest.raises(UploadError, match="a COMMAND file names a GTP program's command, and this lab runs a script"):
        check_upload("lab.zip", archive, gtp=False)


# --- grader grade sub.zip: the same unpacking as an upload's (issue 51) -----------------------


def test_grader_grade_grades_an_archive_of_a_folder_as_the_portal_unpacks_it(tmp_path, monkeypatch):
    """It had said 'make it executable or add a command template for .zip', while the portal
    took the same archive."""
    from click.testing import CliRunner

    from grader.cli import main

    from conftest import HANDOUT_BOARD, ROOT

    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    negamax, greedy = (
        (ROOT / "submissions" / "negamax.py").read_bytes(),
        (ROOT / "submissions" / "greedy.py").read_bytes(),
    )
    (tmp_path / "lab5.zip").write_bytes(zip_of(("lab5/negamax.py", negamax), ("lab5/notes.txt", b"my notes\n")))
    info = tarfile.TarInfo("negamax.py")
    (tmp_path / "lab5.tar.gz").write_bytes(tar_of((info, negamax)))
    (tmp_path / "two.zip").write_bytes(zip_of(("negamax.py", negamax), ("greedy.py", greedy)))
    (tmp_path / "out.zip").write_bytes(zip_of(("../negamax.py", negamax)))
    grade = lambda *args: CliRunner().invoke(main, ["grade", *args, "--boards", "b.txt"])  # noqa: E731
    for archive in ("lab5.zip", "lab5.tar.gz"):
        got = grade(archive)
        assert got.exit_code == 0, got.output
        assert got.output.startswith(f"Grading {archive}: 1 tests")
        assert "1/1" in got.output and "All tests perfect." in got.output
    got = grade("two.zip")
    assert (got.exit_code, got.output) == (
        1, "Error: two.zip: 2 scripts in the archive (greedy.py, negamax.py): set 'entry' in config.yaml to the one "
           "to run\n")  # fmt: skip
    (tmp_path / "config.yaml").write_text("entry: greedy.py\n")
    assert grade("two.zip").exit_code == 0
    with pytest.raises(UploadError) as refused:  # the portal's refusal, word for word
        check_upload("out.zip", (tmp_path / "out.zip").read_bytes())
    assert grade("out.zip").output == f"Error: {refused.value}\n"
    got = grade("lab5.zip", "two.zip")  # a class
    assert got.exit_code == 1
    assert got.output == ("Error: 'lab5.zip' is an archive: grader grade unpacks one alone (grader grade lab5.zip, as "
                          "the portal does an upload); in a class, unpack it into the class's folder\n")  # fmt: skip
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]  # nothing unpacked here


def test_a_hostile_archive_is_refused_at_upload_and_nothing_lands_outside(portal, tmp_path):
    """A zip whose member climbs out of its folder: refused at once in one line (400), not
    queued, not counted; no file of that name anywhere around the course."""
    me = portal["students"]["s6@example.edu"]
    before = me.get("/a/gomoku").json()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("Gomoku.py", "print(1)\n")
        zf.writestr("../../../escaped-by-upload.py", "print(2)\n")
    r = me.upload(out.getvalue(), name="lab.zip", assignment="gomoku")
    assert r.status_code == 400
    assert r.json()["error"] == ("the archive's member '../../../escaped-by-upload.py' climbs out of the folder "
                                 "with '..': pack only the program's folder, by relative paths")  # fmt: skip
    page = me.html("/a/gomoku")
    assert page.status_code == 200
    after = me.get("/a/gomoku").json()
    assert len(after["submissions"]) == len(before["submissions"]) and after["left_today"] == before["left_today"]
    course = portal["course"].folder
    assert not any(list(root.rglob("escaped-by-upload.py")) for root in (course, portal["tmp"]))
    tmp = Path(tempfile.gettempdir())  # where the portal checks an upload: three folders up is /
    assert not list(tmp.glob("*escaped-by-upload.py")) and not list(tmp.glob("*/escaped-by-upload.py"))
    assert not Path("/escaped-by-upload.py").exists()
    r = me.upload(b"my notes", name="notes.txt", assignment="gomoku")
    assert r.status_code == 400 and "not a program the lab runs" in r.json()["error"]


def _raw(url: str, request: bytes, body_after: bytes = b"") -> tuple[bytes, float]:
    """Send ``request`` (headers, perhaps a first part of the body) on a socket; the answer read."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(request)
        if body_after:
            try:
                s.sendall(body_after)
            except OSError:
                pass  # the server closed the connection: it answered already
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer, 0.0


def test_an_upload_over_the_limit_is_refused_before_its_body_is_read(portal):
    me = portal["students"]["s6@example.edu"]
    cookie = "; ".join(f"{k}={v}" for k, v in me.http.cookies.items())
    host = portal["server"].url.split("//")[1]
    head = (f"POST /a/othello HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nAccept: application/json\r\n"
            "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000000\r\n\r\n").encode()  # fmt: skip
    answer, _ = _raw(portal["server"].url, head)  # a gigabyte announced, not one byte of it sent
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    chunk = b"x" * 4096
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(UPLOAD_KB // 4 + 20))
    chunked = head.replace(b"Content-Length: 1000000000", b"Transfer-Encoding: chunked")
    answer, _ = _raw(portal["server"].url, chunked, body)  # no length said: refused once the bytes pass the limit
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    over = me.upload(b"#" * (UPLOAD_KB * 1024 + 1) + b"\n", name="big.py")
    assert over.status_code == 413 and f"{UPLOAD_KB} KiB" in over.json()["error"]
    assert me.get("/a/othello").json()["submissions"] == []
    assert me.upload(b"print(1)\n", name="../../etc/passwd").status_code == 400  # not .py: refused, never a path
    sid = me.upload(b"print(19)\n", name="../../../escape.py").json()["id"]
    assert me.get(f"/s/{sid}").json()["filename"] == "escape.py"


def test_the_daily_limit_refuses_the_upload_past_it(portal):
    httpx = pytest.importorskip("httpx")
    me = portal["students"]["s5@example.edu"]
    per_day = portal["course"].assignments["othello"].per_day
    assert per_day == 3
    codes = []
    lock = threading.Lock()

    def one() -> None:
        c = httpx.Client(base_url=me.url, cookies=me.http.cookies, headers={"Accept": "application/json"}, timeout=30)
        r = c.post("/a/othello", data={"csrf": me.csrf}, files={"script": ("m.py", b"print(19)\n")})
        with lock:
            codes.append(r.status_code)

    threads = [threading.Thread(target=one) for _ in range(per_day + 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [201] * per_day + [429] * 3
    page = me.get("/a/othello").json()
    assert page["left_today"] == 0 and len(page["submissions"]) == per_day
