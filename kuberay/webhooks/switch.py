"""KubeRay's switch for the validating webhooks: ``ENABLE_WEBHOOKS`` exactly ``true``.

Apart from the server so the operator can read it without importing the webhooks (their
server and the validation they run) when they are off, as they are by default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

__all__ = ["ENABLE_WEBHOOKS_ENV", "webhooks_enabled"]

ENABLE_WEBHOOKS_ENV: Final = "ENABLE_WEBHOOKS"


def webhooks_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """KubeRay's switch: webhooks run only when ``ENABLE_WEBHOOKS`` is exactly ``true``."""
    env = os.environ if environ is None else environ
    return env.get(ENABLE_WEBHOOKS_ENV) == "true"
