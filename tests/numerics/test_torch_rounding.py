"""Tests of ampere.numerics.torch_rounding: round_tensor equals round_to (torch_agreement is checked in
test_chapter_tables.py with the chapter's other checks)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402

from .test_rounding import _SPECIAL_BITS, _random_bits  # noqa: E402


def test_round_tensor_equals_round_to():
    x = np.concatenate([_random_bits(100_000, 7), np.array(_SPECIAL_BITS, dtype=np.uint32)]).view(np.float32)
    t = torch.from_numpy(x.copy())
    for fmt, modes in N.ROUNDING_MODES.items():
        for mode in modes:
            a = N.round_to(x, fmt, mode)
            b = N.round_tensor(t, fmt, mode).numpy()
            nan = np.isnan(a)
            np.testing.assert_array_equal(np.isnan(b), nan)
            np.testing.assert_array_equal(a.view(np.uint32)[~nan], b.view(np.uint32)[~nan])
    assert N.round_tensor(t, "fp32") is t
