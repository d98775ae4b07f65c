"""Hypothesis profiles for the property tests: ``ampere`` (default, fast enough for `make test` on two
cores) and ``thorough`` (``HYPOTHESIS_PROFILE=thorough``, ten times the examples)."""

import os

import matplotlib
import torch  # noqa: F401 - imported once here, never under a property test's time alarm

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, database=None, derandomize=True, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                      HealthCheck.filter_too_much])
settings.register_profile("ampere", max_examples=25, **_COMMON)
settings.register_profile("thorough", max_examples=250, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ampere"))
matplotlib.use("Agg")  # figures drawn by property tests are never shown
import matplotlib.pyplot  # noqa: E402,F401
