"""What a hermes home per person costs when an agent is built (bridge/homes.py).

In this process, against the scripted fake model, after the warm-up: agents built in a
person's home for the first time (the home is made, hermes lays out its folders and reads the
linked config), again in the same home, and in the shared home (what every agent was before
memory per person). Prints the median of `--n` builds of each.

    python benchmarks/person_home.py [--n 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=9)
    args = parser.parse_args()
    from tests.support.bridge import hermes_home

    home = hermes_home(Path(tempfile.mkdtemp(prefix="person-home-")))
    from agent_chat.bridge.settings import BridgeSettings, prepare_hermes_home

    settings = replace(BridgeSettings(hermes_home=home), warm_up=False)
    prepare_hermes_home(settings)  # before hermes is imported
    from agent_chat.bridge.agent_factory import build_agent
    from agent_chat.bridge.schemas import ModelSpec
    from agent_chat.bridge.warm_up import warm_up
    from tests.fakes.model_server import running_fake_model

    with running_fake_model() as fake:
        warm_up(settings)
        model = ModelSpec(base_url=fake.base_url, model="fake-model")
        for i in range(3):  # the endpoint learnt, hermes' first-agent costs paid
            build_agent(settings, None, f"warm-{i}", model)

        def ms(user: int | None, session: str) -> float:
            started = time.perf_counter()
            build_agent(settings, user, session, model)
            return (time.perf_counter() - started) * 1000

        people = range(1000, 1000 + args.n)
        first = [ms(user, f"a-{user}") for user in people]
        again = [ms(user, f"b-{user}") for user in people]
        shared = [ms(None, f"c-{i}") for i in range(args.n)]
    print(f"agent build, median of {args.n} (load {os.getloadavg()[0]:.1f}):")
    print(f"  first in a new person's home   {statistics.median(first):6.1f} ms")
    print(f"  again in the same home         {statistics.median(again):6.1f} ms")
    print(f"  in the shared home (before)    {statistics.median(shared):6.1f} ms")


if __name__ == "__main__":
    main()
