"""ampere.glue: plain values, name validation, no-op outside IPython."""

import numpy as np
import pytest

from ampere import glue as glue_mod


def test_plain_converts_numpy_scalars():
    assert type(glue_mod._plain(np.float64(1.5))) is float and type(glue_mod._plain(np.int64(3))) is int
    assert glue_mod._plain(True) is True and glue_mod._plain("x") == "x"


def test_glue_outside_ipython_is_a_noop_and_names_are_checked():
    glue_mod.glue("fine_name-1", np.float32(2.0))
    with pytest.raises(ValueError):
        glue_mod.glue("bad name!", 1)
