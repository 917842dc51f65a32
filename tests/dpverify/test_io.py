"""Result files: checked before work, written atomically, never silently overwritten."""

from __future__ import annotations

import pytest

from dpverify._io import FileSet, atomic_write_text, check_output_dir, check_output_file
from dpverify.errors import InvalidParameterError


def test_output_dir_is_created_and_checked(tmp_path):
    assert check_output_dir("--out", tmp_path / "a" / "b", ["r.json"]).is_dir()


@pytest.mark.parametrize("make, rule", [
    (lambda d: d / "file.txt", "not an existing file"),
    (lambda d: d / "file.txt" / "sub", "can be created"),
    (lambda d: "", "must be a directory path"),
])
def test_bad_output_dirs_are_refused_before_work(tmp_path, make, rule):
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(InvalidParameterError, match=rule) as info:
        check_output_dir("--out", make(tmp_path), ["r.json"])
    assert info.value.parameter == "--out"


def test_existing_results_need_force(tmp_path):
    (tmp_path / "r.json").write_text("{}")
    with pytest.raises(InvalidParameterError, match="--force"):
        check_output_dir("--out", tmp_path, ["r.json", "r.csv"])
    assert check_output_dir("--out", tmp_path, ["r.json"], force=True) == tmp_path
    assert check_output_dir("--out", tmp_path, ["other.json"]) == tmp_path


def test_output_file_checks(tmp_path):
    with pytest.raises(InvalidParameterError, match="existing directory"):
        check_output_file("--out", tmp_path / "missing" / "f.png")
    with pytest.raises(InvalidParameterError, match="not a directory"):
        check_output_file("--out", tmp_path)
    assert check_output_file("--out", tmp_path / "f.png") == tmp_path / "f.png"


def test_atomic_write_replaces_or_keeps(tmp_path):
    path = tmp_path / "x.txt"
    atomic_write_text(path, "old")
    atomic_write_text(path, "new")
    assert path.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]


def test_a_failing_file_set_leaves_the_previous_files(tmp_path):
    (tmp_path / "a.json").write_text("old a")
    (tmp_path / "b.png").write_text("old b")

    def failing_plot(path):
        path.write_text("half")
        raise RuntimeError("plotting failed")

    with pytest.raises(RuntimeError), FileSet(tmp_path) as files:
        files.write_text("a.json", "new a")
        files.write_with("b.png", failing_plot)
    assert (tmp_path / "a.json").read_text() == "old a"
    assert (tmp_path / "b.png").read_text() == "old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.png"]


def test_an_interrupted_file_set_leaves_the_previous_files(tmp_path):
    (tmp_path / "a.json").write_text("old a")
    with pytest.raises(KeyboardInterrupt), FileSet(tmp_path) as files:
        files.write_text("a.json", "new a")
        raise KeyboardInterrupt
    assert (tmp_path / "a.json").read_text() == "old a"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_outputs_respect_the_umask(tmp_path, umask):
    import os

    previous = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "out.txt", "x")
        with FileSet(tmp_path) as files:
            files.write_text("set.txt", "y")
    finally:
        os.umask(previous)
    for name in ("out.txt", "set.txt"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask


def test_one_directory_is_written_by_one_command_at_a_time(tmp_path):
    from dpverify._io import output_lock

    with output_lock("--out", tmp_path):
        with pytest.raises(InvalidParameterError, match="--out is being written by another dpverify command"):
            with output_lock("--out", tmp_path):
                pass
    with output_lock("--out", tmp_path):  # released when the first command is done
        pass


def test_a_second_process_is_refused_while_the_lock_is_held(tmp_path):
    import subprocess
    import sys

    from dpverify._io import output_lock

    code = ("import sys; from dpverify._io import output_lock\n"
            "try:\n    output_lock('--out', sys.argv[1]).__enter__()\n"
            "except Exception as exc:\n    print(exc); sys.exit(3)\n")
    with output_lock("--out", tmp_path):
        held = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert held.returncode == 3 and "another dpverify command" in held.stdout
    free = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert free.returncode == 0, free.stdout


def test_remove_stale_removes_only_what_the_new_result_did_not_write(tmp_path):
    from dpverify._io import remove_stale

    for name in ("a.png", "b.png", "report.json"):
        (tmp_path / name).write_text("old")
    removed = remove_stale(tmp_path, ["a.png", "b.png", "report.json", "gone.png"], ["report.json", "a.png"])
    assert removed == ["b.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "report.json"]
