"""The app's backend with several worker processes, started the way `reflex run --env prod
--single-port` starts it once its frontend is built (reflex/reflex.py:_run_prod): compilation
skipped, then Reflex's own `run_backend_prod`, which runs granian with GRANIAN_WORKERS worker
processes (default 2 x cores + 1 when REFLEX_REDIS_URL reaches a Redis:
reflex/utils/processes.py:get_num_workers) forked from a supervisor that imported the app,
each running the app's lifespan (its own RunManager) and serving the one port.

    python -m tests.support.reflex_workers HOST PORT

The frontend is the stack's copy of the suite's build (tests/support/builds.py), mounted as
`--single-port` mounts it (REFLEX_WEB_WORKDIR).
"""

from __future__ import annotations

import sys

from reflex.utils import exec as reflex_exec
from reflex_base.config import get_config


def main(host: str, port: int) -> None:
    reflex_exec.run_backend_prod(
        host, port, get_config().loglevel.subprocess_level(), mount_frontend_compiled_app=True
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
