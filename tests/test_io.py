from __future__ import annotations

import json

import pytest

from whowhen.io import atomic_path, write_json


def test_atomic_path_keeps_old_file_on_failure(tmp_path) -> None:
    target = write_json(tmp_path / "m.json", {"a": 1})
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        with open(tmp, "w") as fh:
            fh.write("partial")
        raise RuntimeError("killed")
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]


def test_atomic_files_get_normal_permissions(tmp_path) -> None:
    import os
    import stat

    mask = os.umask(0o022)
    try:
        path = write_json(tmp_path / "x.json", {})
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) & 0o044 == 0o044  # readable by group and others
