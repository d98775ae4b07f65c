"""Property tests (Hypothesis) of every public function and class of ampere; see harness.py."""
