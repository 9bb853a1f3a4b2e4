"""What one sign-in's password check costs: argon2id at the app's parameters (OWASP's
minimum, `db/passwords.py`) against pwdlib's defaults, the median of `--runs` verifications
each (a sign-in verifies once; a new password hashes once, the same cost).

    python -m benchmarks.password_hashing [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import time

from pwdlib.hashers.argon2 import Argon2Hasher

from agent_chat.db import passwords


def median_ms(hasher: Argon2Hasher, runs: int) -> float:
    made = hasher.hash("correct horse battery staple")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        assert hasher.verify("correct horse battery staple", made)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    app = passwords.argon2id()
    for label, hasher in (
        ("app (OWASP m=19 MiB, t=2, p=1)", app),
        ("pwdlib defaults", Argon2Hasher()),
    ):
        print(
            f"{label:34} {hasher.hash('x').split('$')[3]:22} median {median_ms(hasher, runs):7.0f} ms"
        )


if __name__ == "__main__":
    main()
