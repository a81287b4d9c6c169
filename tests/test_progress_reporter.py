"""The package's one progress reporter: silent unless verbose, stderr only."""

import re

from sklearn_dpsynth._progress import Progress


def test_silent_reporter_prints_nothing_in_any_shape(capsys):
    quiet = Progress(False, "X", stage_note=lambda: 1 / 0)  # the note is never asked for
    quiet.line("hello")
    quiet.stage("a")
    quiet.stage(None)
    with quiet.bar(range(3), total=3) as bar:
        assert list(bar) == [0, 1, 2]
    assert capsys.readouterr() == ("", "")


def test_lines_are_tagged_and_go_to_stderr(capsys):
    Progress(True, "MST").line("step 1")
    Progress(1).line("[PMW-pub: measuring]")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ["[MST] step 1", "[PMW-pub: measuring]"]


def test_each_stage_prints_one_line_as_it_ends_with_its_note(capsys):
    notes = iter(["spent 0.5", "spent 1"])
    log = Progress(True, "MST", stage_note=lambda: next(notes))
    log.stage("first")
    assert capsys.readouterr().err == ""  # a stage prints when it ends
    log.stage("second")
    log.stage(None)
    lines = capsys.readouterr().err.splitlines()
    assert [re.sub(r"\d+\.\d\ds", "T", line) for line in lines] == [
        "[MST] first: done in T, spent 0.5", "[MST] second: done in T, spent 1"]


def test_bar_is_described_by_the_label(capsys):
    with Progress(True, "evaluate").bar(["a", "b"], unit="metric") as bar:
        list(bar)
    err = capsys.readouterr().err
    assert "evaluate" in err and "2/2" in err
