"""AWS Signature Version 4, checked the way AWS checks it: recomputed from the received request.

Written from the public specification (canonical request → string to sign → HMAC chain),
independently of botocore, so a loopback server can verify what the adapter signed.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qsl, quote

from tests.unit.llm.wire_servers import ReceivedRequest

ALGORITHM = "AWS4-HMAC-SHA256"


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def _canonical_uri(path: str) -> str:
    # Every service but S3 encodes each (already encoded) path segment once more.
    return "/".join(quote(segment, safe="-_.~") for segment in path.split("/")) or "/"


def _canonical_query(query: str) -> str:
    pairs = sorted(parse_qsl(query, keep_blank_values=True))
    return "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in pairs)


def verify_sigv4(
    received: ReceivedRequest,
    *,
    access_key: str,
    secret_key: str,
    region: str,
    service: str = "bedrock",
    session_token: str | None = None,
) -> None:
    """Raise ``AssertionError`` unless ``received`` carries a valid SigV4 signature."""
    headers = received.headers
    scheme, _, fields = headers["authorization"].partition(" ")
    assert scheme == ALGORITHM, scheme
    parts = dict(item.strip().split("=", 1) for item in fields.split(","))
    key_id, date, scope_region, scope_service, terminator = parts["Credential"].split("/")
    amz_date = headers["x-amz-date"]
    assert (key_id, date, scope_region, scope_service, terminator) == (
        access_key,
        amz_date[:8],
        region,
        service,
        "aws4_request",
    )
    if session_token is not None:
        assert headers["x-amz-security-token"] == session_token
    signed = parts["SignedHeaders"].split(";")
    assert "host" in signed and "x-amz-date" in signed, signed
    if session_token is not None:
        assert "x-amz-security-token" in signed
    path, _, query = received.path.partition("?")
    canonical_headers = "".join(f"{name}:{' '.join(headers[name].split())}\n" for name in signed)
    payload_hash = headers.get("x-amz-content-sha256") or hashlib.sha256(received.body).hexdigest()
    canonical = "\n".join(
        [
            received.method,
            _canonical_uri(path),
            _canonical_query(query),
            canonical_headers,
            parts["SignedHeaders"],
            payload_hash,
        ]
    )
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        [ALGORITHM, amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = _hmac(("AWS4" + secret_key).encode(), date)
    for step in (region, service, "aws4_request"):
        key = _hmac(key, step)
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    assert hmac.compare_digest(expected, parts["Signature"]), "the signature does not verify"
