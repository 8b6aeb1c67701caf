"""Output paths are checked before any run: why one cannot be written, in a few words."""

import pytest

from minimizer.errors import MinimizerError
from minimizer.files import refuse_unwritable, unwritable


def test_a_path_under_a_file_cannot_be_written(tmp_path):
    (tmp_path / "a.py").write_text("")
    assert unwritable(tmp_path / "a.py" / "b" / "out.py") == f"{tmp_path / 'a.py'} is a file, not a folder"


def test_a_new_file_in_new_folders_can_be_written(tmp_path):
    assert unwritable(tmp_path / "x" / "y" / "out.py") is None


def test_a_folder_is_not_a_file_and_a_file_is_not_a_folder(tmp_path):
    (tmp_path / "f").write_text("")
    assert unwritable(tmp_path) == "it is a folder"
    assert unwritable(tmp_path / "f", folder=True) == "it is a file, not a folder"
    assert unwritable(tmp_path, folder=True) is None


def test_the_first_unwritable_output_is_named_with_its_option(tmp_path):
    (tmp_path / "f").write_text("")
    refuse_unwritable(("-o", tmp_path / "ok.py"), ("--report", None))
    with pytest.raises(MinimizerError, match=r"cannot write --report .*f/r.json: .* is a file, not a folder"):
        refuse_unwritable(("-o", tmp_path / "ok.py"), ("--report", tmp_path / "f" / "r.json"))
