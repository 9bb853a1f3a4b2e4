"""Which bridge a new run goes to (runs/bridges.py) and how AGENT_CHAT_BRIDGE_URLS is read
(config.py): plain unit tests, no bridge needed."""

from __future__ import annotations

import pytest

from agent_chat.config import load_settings
from agent_chat.runs.bridges import BridgeSet, NoHealthyBridge

A, B, C = "http://10.0.0.1:18731", "http://10.0.0.2:18731", "http://10.0.0.3:18731"


@pytest.fixture
async def bridges() -> BridgeSet:
    made = BridgeSet.of([A, B, C], token="t", reconnect_for=7.0)
    yield made
    await made.aclose()


def up(bridges: BridgeSet, url: str, active: int = 0, waiting: int = 0) -> None:
    bridges.record_up(url, {"active_runs": active, "waiting_runs": waiting})


async def test_a_new_conversation_goes_to_the_least_busy_healthy_bridge(bridges) -> None:
    up(bridges, A, active=3)
    up(bridges, B, active=1, waiting=1)
    up(bridges, C, active=1)
    assert bridges.choose() == C
    up(bridges, C, active=1, waiting=2)
    assert bridges.choose() == B  # waiting runs count too


async def test_a_tie_goes_to_the_first_configured_and_runs_sent_since_the_poll_count(
    bridges,
) -> None:
    for url in (A, B, C):
        up(bridges, url)
    assert bridges.choose() == A
    bridges.note_started(A, "h1")
    assert bridges.choose() == B  # A got one since the last poll
    bridges.note_started(B, "h2")
    bridges.note_started(C, "h3")
    bridges.note_started(C, "h4")
    assert bridges.choose() == A
    up(bridges, C)  # the next poll says what C really runs
    assert bridges.choose() == C


async def test_a_conversation_stays_on_its_last_runs_bridge_while_it_is_healthy(bridges) -> None:
    up(bridges, A)
    up(bridges, B, active=5)
    up(bridges, C)
    assert bridges.choose(last_bridge=B) == B  # busier, but it holds the agent
    bridges.record_down(B, "The agent service at B is not reachable (ConnectError).")
    assert bridges.choose(last_bridge=B) == A


async def test_a_prepared_agent_makes_the_first_run_sticky_too(bridges) -> None:
    up(bridges, A)
    up(bridges, B)
    bridges.note_prepared(B, "hermes-1")
    assert bridges.choose(hermes_session="hermes-1") == B
    assert bridges.choose(hermes_session="hermes-2") == A
    assert bridges.choose(last_bridge=A, hermes_session="hermes-1") == A  # the run wins


async def test_unhealthy_and_excluded_bridges_are_skipped(bridges) -> None:
    bridges.record_down(A, "down A")
    up(bridges, B, active=9)
    up(bridges, C)
    assert bridges.choose() == C
    assert bridges.choose(exclude=[C]) == B
    assert bridges.choose(last_bridge=C, exclude=[C]) == B


async def test_no_healthy_bridge_refuses_with_every_bridges_reason(bridges) -> None:
    for url in (A, B, C):
        bridges.record_down(url, f"The agent service at {url} is not reachable (ConnectError).")
    with pytest.raises(NoHealthyBridge) as refused:
        bridges.choose(last_bridge=A)
    message = str(refused.value)
    assert message.startswith("No agent service is reachable right now")
    assert all(url in message for url in (A, B, C))
    assert "It is kept" in message


async def test_health_records_since_when_and_the_last_error(bridges) -> None:
    health = bridges.health[B]
    assert health.reachable and not health.checked
    bridges.record_down(B, "boom")
    went_down = health.since
    bridges.record_down(B, "boom again")
    assert (health.reachable, health.last_error, health.since) == (False, "boom again", went_down)
    up(bridges, B, active=2, waiting=1)
    assert (health.reachable, health.last_error, health.active_runs, health.waiting_runs) == (
        True,
        "",
        2,
        1,
    )
    assert health.since >= went_down


async def test_one_bridge_is_always_chosen_even_when_down() -> None:
    one = BridgeSet.of([A])
    one.record_down(A, "down")
    assert one.choose() == A  # its own error then says what is wrong
    await one.aclose()


async def test_an_unpinned_run_or_a_bridge_no_longer_configured_is_the_first(bridges) -> None:
    assert bridges.client(None) is bridges.first
    assert bridges.client(B + "/") is bridges.client(B) is not bridges.first
    assert bridges.client("http://10.9.9.9:1") is bridges.first  # never an unlisted URL
    assert bridges.down_after_s == 7.0
    assert bridges.holder(last_bridge=None, hermes_session=None) == A


# ---- AGENT_CHAT_BRIDGE_URLS ----------------------------------------------------------------


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("AGENT_CHAT_BRIDGE_URL", "AGENT_CHAT_BRIDGE_URLS", "AGENT_CHAT_BRIDGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AGENT_CHAT_REDIS_URL", raising=False)
    monkeypatch.delenv("AGENT_CHAT_BRIDGE_DOWN_AFTER_S", raising=False)
    return monkeypatch


def test_one_bridge_by_default_or_by_the_one_bridge_form(env) -> None:
    settings = load_settings()
    assert settings.all_bridge_urls == ("http://127.0.0.1:18731",)
    assert settings.bridge_down_after_s == 15.0
    env.setenv("AGENT_CHAT_BRIDGE_URL", "http://h:1/")
    settings = load_settings()
    assert (settings.bridge_url, settings.all_bridge_urls) == ("http://h:1", ("http://h:1",))


def test_several_bridges_comma_separated(env) -> None:
    env.setenv("AGENT_CHAT_BRIDGE_URLS", f" {A}/ , {B}")
    env.setenv("AGENT_CHAT_BRIDGE_DOWN_AFTER_S", "4.5")
    settings = load_settings()
    assert settings.all_bridge_urls == (A, B)
    assert settings.bridge_url == A
    assert settings.bridge_down_after_s == 4.5


def test_both_forms_are_refused_unless_they_name_the_same_bridge(env) -> None:
    env.setenv("AGENT_CHAT_BRIDGE_URLS", f"{A},{B}")
    env.setenv("AGENT_CHAT_BRIDGE_URL", A)
    with pytest.raises(ValueError, match="not both"):
        load_settings()
    env.setenv("AGENT_CHAT_BRIDGE_URLS", A)
    assert load_settings().all_bridge_urls == (A,)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (f"{A},,{B}", "empty entry"),
        (f"{A},10.0.0.2:18731", r"not an http\(s\) URL"),
        (f"{A},{A}/", "twice"),
    ],
)
def test_a_bad_list_is_refused_clearly(env, value: str, says: str) -> None:
    env.setenv("AGENT_CHAT_BRIDGE_URLS", value)
    with pytest.raises(ValueError, match=says):
        load_settings()


def test_several_bridges_are_refused_with_the_embedded_bridge(env) -> None:
    env.setenv("AGENT_CHAT_BRIDGE", "embedded")
    env.setenv("AGENT_CHAT_BRIDGE_URLS", f"{A},{B}")
    with pytest.raises(ValueError, match="AGENT_CHAT_BRIDGE=embedded.*AGENT_CHAT_BRIDGE_URLS"):
        load_settings()


def test_a_bad_down_after_is_refused(env) -> None:
    env.setenv("AGENT_CHAT_BRIDGE_DOWN_AFTER_S", "soon")
    with pytest.raises(ValueError, match="AGENT_CHAT_BRIDGE_DOWN_AFTER_S"):
        load_settings()
