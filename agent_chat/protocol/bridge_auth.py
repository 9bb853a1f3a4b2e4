"""How a launcher tells its own bridge from whatever else answers on the bridge's port,
without sending the token first: the bridge proves it holds the token by an HMAC of the
launcher's random nonce (`GET /token-proof?nonce=`), which says nothing of the token.
Shared by the bridge (bridge/app.py) and the launcher (serve.py)."""

from __future__ import annotations

import hashlib
import hmac
import re

NONCE = re.compile(r"[0-9a-f]{32,128}")
_PURPOSE = b"agent-chat bridge token proof\n"  # a proof is good for nothing else


def token_proof(token: str, nonce: str) -> str:
    return hmac.new(token.encode(), _PURPOSE + nonce.encode(), hashlib.sha256).hexdigest()


def proof_ok(token: str, nonce: str, proof: object) -> bool:
    return isinstance(proof, str) and hmac.compare_digest(proof, token_proof(token, nonce))
