"""A site file's values that would render a pack that never pages, or that crashes later:
refused at load with one line naming the file and the key, exit 2 (found by the issue-21 review)."""
from __future__ import annotations

import pytest
from test_mixin_generate import generate


@pytest.mark.parametrize("text,message", [
    ("thresholds: {R2: {value: .inf}}\n", "thresholds.R2.value: must be a finite number, got inf"),
    ("thresholds: {R2: {value: .nan}}\n", "thresholds.R2.value: must be a finite number, got nan"),
    ("target_labels: [job, site]\n", "target_labels: must keep instance"),
    ("target_labels: [site]\n", "target_labels: must keep instance"),
    ("thresholds: {R2: {value: " + "9" * 400 + "}}\n", "thresholds.R2.value: must be at most 1e+15, got a 400-digit"),
    ("thresholds: {R1: {noise_floor: {waits: {value: " + "9" * 400 + "}}}}\n", "thresholds.R1.noise_floor.waits.value"),
    ("thresholds: {R2: {for: " + "9" * 30 + "m}}\n", "thresholds.R2.for: at most 7d"),
    ("thresholds: " + "[" * 20000 + "]" * 20000 + "\n", "nested too deeply"),
])
def test_a_site_value_the_pack_cannot_use_is_one_line_exit_2(tmp_path, text, message):
    site = tmp_path / "site.yml"
    site.write_text(text)
    res = generate("--config", str(site), "--out", str(tmp_path / "out"))
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr
    assert f"{site}: {message}" in lines[0]
    assert not (tmp_path / "out").exists()


def test_check_of_a_site_file_without_out_validates_it_and_compares_nothing(tmp_path):
    site = tmp_path / "site.yml"
    site.write_text("thresholds: {R2: {value: 0.004}}\ntarget_labels: [job, instance, site]\n")
    res = generate("--check", "--config", str(site))
    assert res.returncode == 0, res.stderr
    assert "site pack OK" in res.stdout and "out of date" not in res.stderr
    site.write_text("thresholds: {R2: {valeu: 0.004}}\n")
    res = generate("--check", "--config", str(site))
    assert res.returncode == 2 and "thresholds.R2.valeu: unknown field" in res.stderr
