"""moveorder.katago.install: the katrain wheel's KataGo as scripts/setup.sh installed it, a user's own binary,
and a wheel that is not the pinned one."""

import subprocess
import zipfile

import pytest

from helpers import KATAGO, KATAGO_TUNER, REPO
from moveorder.data.download import ChecksumError
from moveorder.katago.install import TUNE_SECTIONS, install_from_katrain, link_user_binary, tuning_text
from moveorder.settings import KATRAIN_MODEL


def test_setup_installed_katago_1_18_1_with_its_model_and_our_tuning():
    version = subprocess.run([str(KATAGO), "version"], capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and "KataGo v1.18.1" in version.stdout
    assert (REPO / "tools/katago/models" / KATRAIN_MODEL).stat().st_size > 10_000_000
    assert KATAGO_TUNER.read_text() == tuning_text()
    lines = tuning_text().splitlines()
    assert lines[0] == "VERSION=13" and len(lines) == 1 + 2 * len(TUNE_SECTIONS)
    assert [line[1:] for line in lines[1::2]] == [name for name, _ in TUNE_SECTIONS]


def test_a_users_binary_is_wrapped_and_runs(tmp_path):
    wrapper = link_user_binary(KATAGO, tmp_path / "kg")  # any executable: here the installed wrapper
    assert wrapper == tmp_path / "kg/bin/katago" and (tmp_path / "kg/opencl-tune.txt").read_text() == tuning_text()
    version = subprocess.run([str(wrapper), "version"], capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and "KataGo v1.18.1" in version.stdout


def test_a_file_that_is_not_an_executable_is_refused(tmp_path):
    (tmp_path / "katago").write_text("not a binary")
    with pytest.raises(FileNotFoundError, match="not an executable KataGo binary"):
        link_user_binary(tmp_path / "katago", tmp_path / "kg")
    assert not (tmp_path / "kg").exists()


def test_a_wheel_other_than_the_pinned_one_is_refused_before_unpacking(tmp_path):
    wheel = tmp_path / "katrain-1.20.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("katrain/KataGo/katago", "#!/bin/sh\necho not katago\n")
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        install_from_katrain(tmp_path / "kg", wheel)
    assert not (tmp_path / "kg/bin/katago").exists() and not (tmp_path / "kg/katago.AppImage").exists()


def test_install_katago_verb_wraps_a_binary_and_refuses_a_wrong_wheel(tmp_path, caplog):
    from moveorder import cli

    assert cli.main(["install-katago", "--dest", str(tmp_path / "kg"), "--binary", str(KATAGO)]) == 0
    version = subprocess.run([str(tmp_path / "kg/bin/katago"), "version"], capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and "KataGo v1.18.1" in version.stdout
    assert (tmp_path / "kg/opencl-tune.txt").read_text() == tuning_text()
    wheel = tmp_path / "katrain-1.20.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("katrain/KataGo/katago", "#!/bin/sh\necho not katago\n")
    assert cli.main(["install-katago", "--dest", str(tmp_path / "other"), "--wheel", str(wheel)]) == 2
    assert f"{wheel}: sha256 mismatch: expected " in caplog.text and not (tmp_path / "other/bin/katago").exists()
