"""Bytecode for our own processes where the installation keeps none (minimizer.runner.bytecode)."""

import compileall
import importlib
import sys

from minimizer.runner import bytecode


def test_a_package_without_bytecode_is_told_from_one_with_it(tmp_path, monkeypatch):
    package = tmp_path / "bare_package"
    package.mkdir()
    (package / "__init__.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "pycache_prefix", None)
    assert bytecode.installation_keeps_none.__wrapped__("bare_package")
    compileall.compile_dir(str(package), quiet=1)
    assert not bytecode.installation_keeps_none.__wrapped__("bare_package")


def test_our_bytecode_goes_to_our_folder_and_the_settings_come_back(tmp_path, monkeypatch):
    """What the warm server imports is compiled into our folder; the candidates it forks afterwards get the
    interpreter's own settings (here: write no bytecode, as PYTHONDONTWRITEBYTECODE=1 says)."""

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "fresh_module_for_bytecode.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setattr(bytecode, "BYTECODE_CACHE", tmp_path / "cache")
    monkeypatch.setattr(bytecode, "installation_keeps_none", lambda: True)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    with bytecode.own_bytecode():
        assert importlib.import_module("fresh_module_for_bytecode").VALUE == 2
    assert list((tmp_path / "cache").rglob("fresh_module_for_bytecode*.pyc"))
    assert not (tmp_path / "src" / "__pycache__").exists()
    assert sys.dont_write_bytecode is True and sys.pycache_prefix is None
    env = bytecode.own_process_environment({"PYTHONDONTWRITEBYTECODE": "1", "OTHER": "x"})
    assert env == {"OTHER": "x", "PYTHONPYCACHEPREFIX": str(tmp_path / "cache")}
