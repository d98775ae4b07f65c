"""ampere.architecture as a whole: every public function names its chapter; arguments are validated
alike in every file (NumPy integers accepted, bools refused)."""

import pytest

from ampere import architecture as arch


def test_public_functions_name_the_chapter():
    import inspect

    for name in arch.__all__:
        obj = getattr(arch, name)
        # defined in one of the package's files (not a transitional alias of another module)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__.startswith(arch.__name__ + "."):
            assert "Architecture of the GA100" in " ".join((obj.__doc__ or "").split()), name


def test_numpy_integers_are_accepted_and_bools_refused():
    import numpy as np

    assert arch.matmul_intensity(np.int64(4096), np.int32(4096), 4096) == pytest.approx(4096 / 3)
    assert arch.harvest_yield(np.int64(10), np.int64(10), 0.0) == 1.0
    with pytest.raises(TypeError, match="m"):
        arch.matmul_intensity(True, 2, 2)
    with pytest.raises(TypeError, match="units"):
        arch.harvest_yield(10.0, 5, 0.1)
    with pytest.raises(ValueError, match="unit_defect_probability"):
        arch.harvest_yield(10, 5, float("nan"))
