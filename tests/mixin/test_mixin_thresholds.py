"""mixin.thresholds: the one Threshold type, read from alerts/thresholds.yaml; its errors name
the file, the entry and the field; its colour rule is what the dashboards apply."""
import pytest

from mixin import thresholds
from mixin.thresholds import ZERO_EPSILON


@pytest.mark.parametrize("text,message", [
    ("version: 2\nthresholds: []\n", "version: expected 1, got 2"),
    ("thresholds: {}\n", "expected a mapping with a 'thresholds' list"),
    ("version: 1\nthresholds:\n  - {id: R1, note: R1, alert: X, description: d, value: 1, unit: s, op: '>', for: 10 minutes, severity: warning}\n",
     "thresholds[R1].for: not a Prometheus duration: '10 minutes'"),
    ("version: 1\nthresholds:\n  - {id: R1, note: R1, alert: X, description: d, value: 1, unit: s, op: '>', for: 10m, severity: page}\n",
     "thresholds[R1].severity: expected one of critical, warning, info, got 'page'"),
    ("version: 1\nthresholds:\n  - {id: R1, note: row one, alert: X, description: d, value: 1, unit: s, op: '>', for: 10m, severity: info}\n",
     "thresholds[R1].note: 'row one' is not a field-notes id"),
    ("version: 1\nthresholds:\n  - {id: R1, note: R1, alert: X, description: d, value: 1, unit: s, op: '>', for: 1m, severity: info, colour: red}\n",
     "thresholds[R1]: unknown field(s) colour"),
    ("version: 1\nthresholds: [\n", "not valid YAML"),
])
def test_thresholds_errors_name_the_field(tmp_path, text, message):
    f = tmp_path / "t.yaml"
    f.write_text(text)
    with pytest.raises(thresholds.ThresholdError) as exc:
        thresholds.load(f)
    assert message in str(exc.value)
    assert str(f) in str(exc.value)


def test_values_in_base_units():
    t = thresholds.load()
    assert t["R1"].value == 0.002 and t["R1"].unit == "seconds" and t["R1"].for_ == "10m"
    assert t["R1"].floor("waits").value == 1
    assert t["R2"].value == 0.005 and t["R2"].severity == "warning"
    assert t["I1"].value == 0.995 and t["I1_red"].value == 0.99
    assert t["Q2"].value == 10 and t["Q3"].value == 8 and t["M2"].value == 0.005
    assert t["R17_write"].value == 0.002 and t["R17_read"].value == 0.01 and t["I2"].value == 0.02
    assert t["R17_read"].notes == ("R17", "R7") and t["R17_read"].note == "R17"
    assert t["Z3"].for_seconds() == 6 * 3600
    with pytest.raises(thresholds.ThresholdError, match="no noise_floor named 'nope'"):
        t["R1"].floor("nope")


def test_where_a_panel_changes_colour():
    """Grafana colours a value >= a step: `>` thresholds colour from the value, eliminate rows
    from their rate floor, a bare `> 0` from just above zero, `<` floors are green from the value
    and `<=` ones just above it."""
    t = thresholds.load()
    assert t["R2"].colour_at == 0.005 and not t["R2"].lower_is_bad and t["R2"].colour == "orange"
    assert t["R3"].value == 0 and t["R3"].colour_at == t["R3"].floor("rate").value == 0.01
    assert t["Z4"].colour_at == ZERO_EPSILON
    assert t["I1_red"].lower_is_bad and t["I1_red"].colour_at == 0.99 and t["I1"].colour == "yellow"
    assert t["Q3"].op == "<=" and t["Q3"].colour_at == 8 + ZERO_EPSILON
    assert isinstance(t["Q2"].colour_at, float)
