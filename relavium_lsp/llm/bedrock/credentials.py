"""AWS credentials for Bedrock: the standard credential chain and SigV4, through ``botocore``.

``botocore`` resolves credentials the way every AWS tool does — environment variables,
the shared ``credentials`` / ``config`` files (a ``profile``), SSO token caches,
``credential_process``, web identity, container and instance roles — refreshes the ones that
expire, and signs each request with Signature Version 4 (service ``bedrock``) over the exact
bytes sent. No crypto of our own. It is an optional extra (``relavium-lsp[bedrock]``),
imported on the first call, so a workspace without Bedrock never loads it; when it is
missing the error says what to install. A Bedrock API key (``AWS_BEARER_TOKEN_BEDROCK`` or
the keychain) needs none of this: it is a bearer header
(:class:`~relavium_lsp.llm.authorized_http.HeaderKeyCredentials`).

Resolving and refreshing may read files or ask a metadata endpoint, so both run on a worker
thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

from relavium_lsp.llm.http_call import CredentialsUnavailable
from relavium_lsp.log_secrets import register_secret

INSTALL_HINT = "pip install 'relavium-lsp[bedrock]'"
# botocore's names for where credentials were found, as a user would say them.
_METHODS = {
    "env": "environment variables",
    "shared-credentials-file": "the shared credentials file",
    "config-file": "the AWS config file",
    "sso": "AWS IAM Identity Center (SSO)",
    "assume-role": "an assumed role",
    "assume-role-with-web-identity": "a web identity role",
    "custom-process": "credential_process",
    "container-role": "the container role",
    "iam-role": "the instance role",
}
SIGNING_NAME = "bedrock"


def botocore_modules() -> tuple[Any, Any, Any]:
    """``botocore.session``, ``botocore.auth`` and ``botocore.awsrequest``, or advice."""
    try:
        import botocore.auth
        import botocore.awsrequest
        import botocore.session
    except ImportError:
        raise CredentialsUnavailable(
            f"Amazon Bedrock needs the botocore package: {INSTALL_HINT}"
        ) from None
    return botocore.session, botocore.auth, botocore.awsrequest


class AwsCredentials:
    """SigV4 with the AWS credential chain (see the module docstring)."""

    def __init__(self, provider_id: str, *, region: str, profile: str | None = None) -> None:
        self.provider_id = provider_id
        self.region = region
        self.profile = profile
        self._lock = threading.Lock()
        self._resolved: Any = None
        self._method: str | None = None
        self._secrets: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        """Where the credentials were found (botocore's name for it), never their values."""
        chain = (
            f"the AWS credential chain (profile {self.profile!r})"
            if self.profile
            else "the AWS credential chain"
        )
        if self._method is None:
            return chain
        return f"{chain}: {_METHODS.get(self._method, self._method)}"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secret key and session token, to be redacted from provider text."""
        return self._secrets

    def _frozen(self) -> Any:
        """Current credentials (resolved once, refreshed by botocore when they expire)."""
        session_module, _auth, _request = botocore_modules()
        with self._lock:
            if self._resolved is None:
                session = session_module.Session(profile=self.profile)
                try:
                    self._resolved = session.get_credentials()
                except Exception as exc:  # a broken profile or SSO cache: say which, not what
                    raise CredentialsUnavailable(
                        f"{self.provider_id}: the AWS credentials could not be loaded "
                        f"({type(exc).__name__}); check the profile and `aws sso login`"
                    ) from None
                if self._resolved is None:
                    profile = f" for profile {self.profile!r}" if self.profile else ""
                    raise CredentialsUnavailable(
                        f"{self.provider_id}: no AWS credentials found{profile}: set "
                        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE, run `aws sso "
                        "login`, or store a Bedrock API key with `relavium-lsp keys set "
                        f"{self.provider_id}`"
                    )
                self._method = getattr(self._resolved, "method", None)
            try:
                frozen = self._resolved.get_frozen_credentials()
            except Exception as exc:
                raise CredentialsUnavailable(
                    f"{self.provider_id}: the AWS credentials from {self.source} could not be "
                    f"refreshed ({type(exc).__name__}); run `aws sso login` or renew them"
                ) from None
            kept = tuple(value for value in (frozen.secret_key, frozen.token) if value)
            for value in kept:
                register_secret(value)
            self._secrets = kept
            return frozen

    def sign(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        """SigV4-signed headers for this exact request (blocking: resolves credentials)."""
        frozen = self._frozen()
        _session, auth, awsrequest = botocore_modules()
        request = awsrequest.AWSRequest(method=method, url=url, data=body, headers=dict(headers))
        auth.SigV4Auth(frozen, SIGNING_NAME, self.region).add_auth(request)
        return {name: str(value) for name, value in request.headers.items()}

    async def authorize(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        """The signed headers, worked out on a worker thread."""
        return await asyncio.to_thread(self.sign, method, url, headers, body)
