"""A property-based run of schemathesis against `/api/openapi.json` of the running app, on
every database test.sh runs, in two phases:
- every operation alone: a bounded number of generated requests (valid and invalid ones);
- stateful: schemathesis' state machine over the links the document declares
  (agent_chat/api/docs.py: a created conversation's id used by its reads, changes, runs and
  deletion, a run's id by its state, stream and stop, a folder's by its rename and deletion),
  a fixed number of scenarios of a bounded number of steps.
Both derandomized (the same requests every run: a failure reproduces), and for each
response every check of schemathesis (no 5xx, a documented status code, content type and
headers, a body matching the schema, invalid requests refused, a deleted resource gone, a
created one there, no answer without the token) but `positive_data_acceptance`, which
tests/support/fuzz.py replaces with "a 422 names a known field". The runs the requests start
are stopped afterwards. Excluded operations: `tests.support.fuzz.EXCLUDED` (none today).
The long run with fresh seeds: scripts/fuzz.sh."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.errors import Flaky
from schemathesis.checks import positive_data_acceptance
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.pytest._test_builder import build_operation_test
from schemathesis.python._constants.orchestrator import make_constants_value_source

from agent_chat.api import create_api
from tests.support.fuzz import EXCLUDED, stop_every_run
from tests.support.stack import ARTIFACTS, Stack

# On both databases in ./test.sh: the API's answers come from the store, whose SQL differs.
pytestmark = [pytest.mark.e2e, pytest.mark.every_database]

MAX_EXAMPLES = 10  # per operation and generation mode (with its explicit examples)
SCENARIOS = 40  # state machine runs, each of at most STEPS requests
SEED = 44  # of the state machine's runs
STEPS = 10
TIMEOUT = 30  # per request: a stream is read to its run's end
calls: Counter[str] = Counter()
statuses: Counter[int] = Counter()
linked: Counter[tuple[str, bool]] = Counter()  # state machine steps that took an id along a link


# The document the app serves, built here without the app (pytest needs the operations when
# it collects); the first test checks the app serves exactly this one.
SPEC = create_api(lambda: None).openapi()
schema = schemathesis.openapi.from_dict(SPEC)
if EXCLUDED:
    schema = schema.exclude(name=list(EXCLUDED))


@pytest.fixture(scope="module")
def base_url(api_stack: Stack, api_token: str) -> Iterator[str]:
    yield api_stack.url
    stop_every_run(api_stack.url, api_token)
    summary = (
        f"schemathesis: {len(calls)} operations, {sum(calls.values())} requests, "
        f"statuses {dict(sorted(statuses.items()))}; {sum(linked.values())} steps along "
        f"{len(linked)} links ({sum(not inferred for _, inferred in linked)} declared by the app, "
        f"the others inferred by schemathesis)\n"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "schemathesis-summary.txt").write_text(summary)
    print("\n" + summary)


def test_the_app_serves_this_document(base_url: str, api_token: str) -> None:
    served = httpx.get(f"{base_url}/api/openapi.json", headers=_auth(api_token), timeout=30)
    assert served.status_code == 200
    doc = served.json()
    assert doc.keys() == SPEC.keys() and doc["components"] == SPEC["components"]
    for path, operations in SPEC["paths"].items():
        for method, operation in operations.items():
            assert doc["paths"][path][method] == operation, (method, path)
    assert doc == SPEC
    # The links the state machine below walks (agent_chat/api/docs.py).
    created = doc["paths"]["/api/chat/sessions"]["post"]["responses"]["201"]
    assert "StartRun" in created["links"]


# One pytest test per operation, made here rather than by `@schema.parametrize()`: under
# pytest 9 that plugin gives its 26 items one node id, and pytest-xdist (./test.sh) then ran
# the first operation only.
OPERATIONS = {result.ok().label: result.ok() for result in schema.get_all_operations()}


@pytest.mark.parametrize("label", list(OPERATIONS))
def test_every_operation_conforms_to_its_schema(label: str, base_url: str, api_token: str) -> None:
    """Schemathesis' phases for one operation as its pytest plugin runs them: the explicit
    examples, coverage (boundary values, missing and wrong parameters, other methods) and
    MAX_EXAMPLES generated requests of each mode (valid, invalid)."""

    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,  # the same requests every run: a failure reproduces
    )
    def check(case: schemathesis.Case) -> None:
        response = case.call_and_validate(
            base_url=base_url,
            headers=_auth(api_token),
            timeout=TIMEOUT,
            excluded_checks=[positive_data_acceptance],
        )
        calls[case.operation.label] += 1
        statuses[response.status_code] += 1

    build_operation_test(
        config=schema.config,
        operation=OPERATIONS[label],
        test_func=check,
        given_kwargs={},
        feedback=FeedbackSources(constants_value_source=make_constants_value_source(schema)),
    )()


def test_chains_of_operations_along_the_links(base_url: str, api_token: str) -> None:
    """Schemathesis' state machine: scenarios that start with any operation and go on along
    the document's links with the ids the answers gave (and, now and then, an unknown one)."""
    found: list[Exception] = []  # a failure, as it first happened
    scenarios = 0

    class Chains(schema.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, Any]:
            return {"base_url": base_url, "headers": _auth(api_token), "timeout": TIMEOUT}

        def step(self, input: Any) -> Any:
            if input.transition is not None and input.is_applied:
                linked[(input.transition.id, input.transition.is_inferred)] += 1
            try:
                return super().step(input)
            except Exception as exc:
                found.append(exc)
                raise

        def validate_response(self, response: Any, case: schemathesis.Case, **kwargs: Any) -> None:
            calls[case.operation.label] += 1
            statuses[response.status_code] += 1
            excluded = [*kwargs.pop("excluded_checks", []), positive_data_acceptance]
            case.validate_response(
                response,
                excluded_checks=excluded,
                transport_kwargs=kwargs or None,
                recorder=self.recorder,
            )

        def teardown(self) -> None:
            nonlocal scenarios
            scenarios += 1
            super().teardown()

    # Fixed seeds: the same scenarios every run. The app's answers to them may still differ
    # from one run to the next (a run still going or over: 409 or 201), and Hypothesis stops
    # a run whose choices no longer lead where they led before (FlakyStrategyDefinition).
    # Schemathesis' own runner goes on then with a new run; so does this, with the next seed.
    for attempt in range(5):
        if scenarios >= SCENARIOS:
            break
        Chains.rule_order_seed = SEED + attempt
        try:
            seed(SEED + attempt)(Chains).run(
                settings=settings(
                    max_examples=SCENARIOS - scenarios,
                    stateful_step_count=STEPS,
                    deadline=None,
                    phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                    database=None,
                )
            )
        except Flaky as exc:
            # The failure as it first happened is the one to read (its replay went otherwise).
            if found:
                raise found[0] from exc
        except Exception as exc:
            if found and found[0] is not exc:
                raise found[0] from exc
            raise
    assert scenarios >= SCENARIOS, f"{scenarios} scenarios ran"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
