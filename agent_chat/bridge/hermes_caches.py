"""What hermes learns about an endpoint, learnt once per bridge process.

Every AIAgent hermes builds asks again (profiled, `benchmarks/first_answer.py`):

- *which local server is there* (`detect_local_server_type`: up to five GETs to a local
  endpoint, LM Studio, Ollama, llama.cpp, vLLM; hermes keeps only a positive answer, so a
  plain OpenAI-compatible server is probed again for every agent), and Ollama's context size
  (`query_ollama_num_ctx`): ~0.17 s per agent on a local endpoint;
- *the TLS verify setting* (`resolve_httpx_verify`: with a CA bundle in the environment it
  loads the bundle into a new SSLContext, and every httpx client hermes makes, the probe's
  too, loads its default bundle again): ~0.27 s per agent, ~0.05 s per client.

Both are answers about the endpoint or the machine, never about a conversation: they are
kept per (base URL, API key[, model]) for `PROBE_TTL_S`, and the SSLContexts (safe to share
between clients; no client here speaks HTTP/2, whose ALPN setting is per context) per CA
setting for the process. `probe_count()` says how many real probes
ran (the tests check a second conversation on the same endpoint runs none).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable
from typing import Any

PROBE_TTL_S = 600.0
# "Nothing found" may be a server not up yet (an Ollama started after the bridge would be
# missed, and get no context size): asked again sooner. A probe costs ~0.03 s once the TLS
# setting is shared.
NOTHING_FOUND_TTL_S = 60.0
_CA_VARS = ("HERMES_CA_BUNDLE", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")

_lock = threading.Lock()
_install_lock = threading.Lock()
_installed = False
_probes = 0
_caches: list[dict[tuple[object, ...], Any]] = []


def probe_count() -> int:
    """How many endpoint probes reached hermes (cache misses) in this process."""
    return _probes


def clear() -> None:
    """Forget every answer (tests: a process that has to learn an endpoint again)."""
    with _lock:
        for cache in _caches:
            cache.clear()


def _memo(fn: Callable[..., Any], key: Callable[..., tuple[object, ...]], ttl: float | None):
    """`fn` answering from a process-wide cache keyed by `key(*args, **kwargs)`, for `ttl`
    seconds (None: for the process), an answer of None for NOTHING_FOUND_TTL_S at most."""
    cache: dict[tuple[object, ...], tuple[Any, float]] = {}
    _caches.append(cache)

    @functools.wraps(fn)
    def cached(*args: Any, **kwargs: Any) -> Any:
        global _probes
        k = key(*args, **kwargs)
        now = time.monotonic()
        with _lock:
            hit = cache.get(k)
        if hit is not None:
            limit = ttl if hit[0] is not None or ttl is None else min(ttl, NOTHING_FOUND_TTL_S)
            if limit is None or now - hit[1] < limit:
                return hit[0]
        value = fn(*args, **kwargs)  # outside the lock: a probe takes a while
        with _lock:
            cache[k] = (value, now)
            _probes += ttl is not None
        return value

    return cached


def _server_key(base_url: str, api_key: str = "") -> tuple[object, ...]:
    return (base_url.rstrip("/"), api_key or "")


def _num_ctx_key(model: str, base_url: str, api_key: str = "") -> tuple[object, ...]:
    return (model, base_url.rstrip("/"), api_key or "")


def _verify_key(*, ca_bundle: Any = None, ssl_verify: Any = None, base_url: str = "") -> tuple:
    return (ca_bundle, ssl_verify, *(os.environ.get(v, "") for v in _CA_VARS))


def _shared_default_context(create: Callable[..., Any]) -> Callable[..., Any]:
    """httpx's `create_ssl_context`, answering its default case (verify=True, no client
    certificate) with one context per CA environment."""
    contexts: dict[tuple[object, ...], Any] = {}

    @functools.wraps(create)
    def shared(verify: Any = True, cert: Any = None, trust_env: bool = True) -> Any:
        if verify is not True or cert is not None:
            return create(verify=verify, cert=cert, trust_env=trust_env)
        key = (trust_env, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        with _lock:
            context = contexts.get(key)
        if context is None:
            context = create(verify=verify, cert=cert, trust_env=trust_env)
            with _lock:
                context = contexts.setdefault(key, context)
        return context

    return shared


def install() -> None:
    """Wrap hermes' endpoint probes and TLS setting in process-wide caches (idempotent;
    after hermes is importable, i.e. after prepare_hermes_home)."""
    with _install_lock:
        if not _installed:
            _install()


def _install() -> None:
    global _installed
    import agent.agent_init as agent_init
    import agent.model_metadata as model_metadata
    import agent.ssl_verify as ssl_verify

    detect = _memo(model_metadata.detect_local_server_type, _server_key, PROBE_TTL_S)
    model_metadata.detect_local_server_type = detect
    num_ctx = _memo(model_metadata.query_ollama_num_ctx, _num_ctx_key, PROBE_TTL_S)
    model_metadata.query_ollama_num_ctx = num_ctx
    agent_init.query_ollama_num_ctx = num_ctx  # imported by name there
    ssl_verify.resolve_httpx_verify = _memo(ssl_verify.resolve_httpx_verify, _verify_key, None)
    import httpx._transports.default as transports  # where httpx builds a client's context

    if callable(getattr(transports, "create_ssl_context", None)):
        transports.create_ssl_context = _shared_default_context(transports.create_ssl_context)
    _installed = True
