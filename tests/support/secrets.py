"""Whether a command's output shows a secret: as it is, or in base64 at any alignment
(`base64` walks round hermes' masking of secrets in plain output)."""

from __future__ import annotations

import base64


def reveals(text: str, secret: str | bytes) -> bool:
    raw = secret.encode() if isinstance(secret, str) else secret
    if raw.decode(errors="ignore") in text:
        return True
    # The secret at each offset modulo 3 in the encoded bytes: the characters wholly its
    # own (the first group holds the padding "x"s, the last may be partial).
    return any(base64.b64encode(b"x" * shift + raw)[4:-4].decode() in text for shift in range(3))
