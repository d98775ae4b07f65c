"""ampere.architecture.die: die layouts, the full-die L2, harvesting yield."""

import pytest

from ampere import architecture as arch
from ampere import specs


@pytest.mark.parametrize("name", specs.names())
def test_die_layout_enables_exactly_the_product_sms(name):
    spec = specs.get(name)
    layout = arch.die_layout(spec)
    assert layout.enabled_sms == spec.sm_count
    assert layout.gpcs == spec.die_gpcs and all(len(g) == spec.die_tpcs_per_gpc for g in layout.tpcs)


def test_ga100_product_configuration():
    layout = arch.die_layout("A100-SXM4-40GB")
    assert layout.enabled_gpcs == 7
    assert sorted(sum(g) for g in layout.tpcs if any(g)) == [7, 7, 8, 8, 8, 8, 8]


def test_full_die_l2_from_the_slice_rule():
    product, die = arch.full_die_l2_bytes("A100-SXM4-80GB")
    assert product == specs.get("A100-SXM4-80GB").l2_bytes == 40 * 2**20 and die == 48 * 2**20
    with pytest.raises(ValueError, match="GA100"):
        arch.full_die_l2_bytes("H100-SXM5-80GB")


def test_harvest_yield():
    assert arch.harvest_yield(128, 128, 0.0) == 1.0
    assert arch.harvest_yield(10, 0, 0.9) == pytest.approx(1.0)
    assert arch.harvest_yield(1, 1, 0.25) == pytest.approx(0.75)
    assert arch.harvest_yield(128, 108, 0.05) > 0.99 > 0.01 > arch.harvest_yield(128, 128, 0.05)
    with pytest.raises(ValueError):
        arch.harvest_yield(10, 11, 0.1)
    with pytest.raises(ValueError):
        arch.harvest_yield(10, 5, 1.5)


def test_harvest_shortfall_is_the_complement_without_cancellation():
    for q in (0.02, 0.1, 0.3):
        assert arch.harvest_shortfall(128, 108, q) + arch.harvest_yield(128, 108, q) == pytest.approx(1.0)
    tiny = arch.harvest_shortfall(128, 108, 0.01)
    assert 0 < tiny < 1e-15  # far below what 1 - harvest_yield could resolve
    with pytest.raises(ValueError):
        arch.harvest_shortfall(5, 6, 0.1)
