"""The browser tests (test_browser.py) read a built site: they run when ``AMPERE_SITE_DIR`` names it
(``make test`` sets it after building the site: ``AMPERE_SITE_DIR=_build/html pytest tests/site/test_browser.py``)
and are not collected otherwise, so the unit run before the build never sees a stale site."""

from __future__ import annotations

import os

collect_ignore = [] if os.environ.get("AMPERE_SITE_DIR") else ["test_browser.py"]
