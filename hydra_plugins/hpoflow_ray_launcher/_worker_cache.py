"""What a Ray worker process keeps between the sweep jobs it runs: the sweep's shared objects, by object ref.

A module of its own whose name starts with ``_``: Hydra's plugin scan (``Plugins`` is set up again by
``Singleton.set_state``) re-executes every other module under ``hydra_plugins``, the launcher's included, which
reset a cache kept there to ``{}`` -- so the shared objects were fetched and unpickled, and the plugins scanned
again, for every job.
"""
from typing import Any

SHARED: dict[str, Any] = {}
