"""Google credentials for Vertex AI, found and refreshed by ``google-auth``.

Where they come from, in order: the provider's ``credentials_file`` (a service-account key
or ``gcloud`` user credentials; no other type is acted on), ``$GOOGLE_APPLICATION_CREDENTIALS``, the
file ``gcloud auth application-default login`` writes, and — on a Google Cloud machine only
(its DMI product name says Google) — the metadata server. Off Google Cloud the metadata
server is never asked, so a machine without credentials fails at once with advice instead
of probing a link-local address.

``google-auth`` does the OAuth work (signing service-account assertions, refreshing user
credentials); its HTTP goes through :class:`HttpxTransport`, an implementation of its public
``google.auth.transport.Request`` interface over ``httpx``. It is imported on the first call,
so a workspace without a Vertex provider never loads it; when it is missing the error says
what to install. Refreshing blocks, so it runs on a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from relavium_lsp.llm.http_call import CredentialsUnavailable
from relavium_lsp.log_secrets import register_secret

if TYPE_CHECKING:
    from google.auth.credentials import Credentials as GoogleAuthCredentials

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
INSTALL_HINT = "pip install 'relavium-lsp[vertex]'"
_DMI_PRODUCT = Path("/sys/class/dmi/id/product_name")


def gcloud_adc_path(environ: Mapping[str, str]) -> Path:
    """Where ``gcloud auth application-default login`` keeps its credentials."""
    configured = environ.get("CLOUDSDK_CONFIG")
    if configured:
        root = Path(configured)
    elif os.name == "nt":
        root = Path(environ.get("APPDATA", "~")) / "gcloud"
    else:
        root = Path("~/.config/gcloud")
    return (root / "application_default_credentials.json").expanduser()


def on_google_cloud() -> bool:
    """Whether this machine is a Google Cloud VM (without asking the network)."""
    try:
        return "Google" in _DMI_PRODUCT.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def google_auth_module() -> Any:
    """``google.auth``, or :class:`CredentialsUnavailable` saying how to install it."""
    try:
        import google.auth
        import google.auth.transport
    except ImportError:
        raise CredentialsUnavailable(
            f"Vertex AI needs the google-auth package: {INSTALL_HINT}"
        ) from None
    return google.auth


class HttpxTransport:
    """``google.auth.transport.Request`` over ``httpx`` (token endpoints, metadata server)."""

    def __init__(self, timeout_s: float = 30.0) -> None:
        self._timeout_s = timeout_s

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> Any:
        """Send one request for ``google-auth``; transport faults become its TransportError."""
        import google.auth.exceptions

        try:
            with httpx.Client(timeout=timeout or self._timeout_s) as client:
                response = client.request(method, url, content=body, headers=dict(headers or {}))
        except httpx.HTTPError as exc:
            raise google.auth.exceptions.TransportError(  # type: ignore[no-untyped-call]
                type(exc).__name__
            ) from None
        return _Response(response.status_code, dict(response.headers), response.content)


class _Response:
    """``google.auth.transport.Response``: status, headers, data."""

    def __init__(self, status: int, headers: dict[str, str], data: bytes) -> None:
        self.status = status
        self.headers = headers
        self.data = data


class GoogleCredentials:
    """Vertex AI credentials (see the module docstring)."""

    def __init__(
        self,
        provider_id: str,
        *,
        credentials_file: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.provider_id = provider_id
        self._environ = os.environ if environ is None else environ
        self._file = self._credentials_path(credentials_file)
        self._credentials: GoogleAuthCredentials | None = None
        self._lock = threading.Lock()
        self._token: str | None = None

    def _credentials_path(self, configured: str | None) -> tuple[Path, str] | None:
        if configured:
            return Path(configured).expanduser(), f"credentials_file {configured}"
        variable = self._environ.get("GOOGLE_APPLICATION_CREDENTIALS", "").strip()
        if variable:
            return Path(variable).expanduser(), "$GOOGLE_APPLICATION_CREDENTIALS"
        adc = gcloud_adc_path(self._environ)
        if adc.is_file():
            return adc, "gcloud application-default credentials"
        return None

    @property
    def source(self) -> str:
        """Where the credentials come from (a file's role, never its content)."""
        if self._file is not None:
            return f"Google credentials from {self._file[1]}"
        if on_google_cloud():
            return "the Google Cloud metadata server"
        return "no Google credentials"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The current access token, to be redacted from provider text."""
        return (self._token,) if self._token else ()

    def project_hint(self) -> str | None:
        """The project the credentials name (a service account's, or the quota project)."""
        for variable in ("GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"):
            value = self._environ.get(variable, "").strip()
            if value:
                return value
        if self._file is None:
            return None
        try:
            data = json.loads(self._file[0].read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        for key in ("project_id", "quota_project_id"):
            if isinstance(data, dict) and isinstance(data.get(key), str) and data[key]:
                return str(data[key])
        return None

    async def authorize(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        """``headers`` with a fresh bearer token."""
        token = await asyncio.to_thread(self._fresh_token)
        return {**headers, "authorization": f"Bearer {token}"}

    def _fresh_token(self) -> str:
        """A valid access token, refreshing (blocking) when needed."""
        google_auth_module()
        import google.auth.exceptions

        with self._lock:
            credentials = self._credentials or self._load()
            self._credentials = credentials
            if not credentials.valid:
                try:
                    credentials.refresh(HttpxTransport())  # type: ignore[no-untyped-call]
                except google.auth.exceptions.GoogleAuthError as exc:
                    raise CredentialsUnavailable(
                        f"{self.provider_id}: {self.source} could not be refreshed "
                        f"({type(exc).__name__}); run `gcloud auth application-default login` "
                        "or check the service account key"
                    ) from None
            token = credentials.token
            if not isinstance(token, str) or not token:
                raise CredentialsUnavailable(f"{self.provider_id}: {self.source} gave no token")
            register_secret(token)
            self._token = token
            return token

    def _load(self) -> GoogleAuthCredentials:
        if self._file is not None:
            return self._from_file(*self._file)
        if on_google_cloud():
            from google.auth import compute_engine

            return compute_engine.Credentials(scopes=[CLOUD_PLATFORM_SCOPE])  # type: ignore[no-untyped-call]
        raise CredentialsUnavailable(
            f"{self.provider_id}: no Google credentials: run `gcloud auth application-default "
            "login`, set $GOOGLE_APPLICATION_CREDENTIALS to a service account key, or set "
            f"credentials_file under [providers.{self.provider_id}]"
        )

    def _from_file(self, path: Path, role: str) -> GoogleAuthCredentials:
        """A service-account key or ``gcloud`` user credentials, by the file's ``type``.

        Only these two types are read (google-auth's advice for files of unknown origin):
        a file naming anything else is refused rather than acted on.
        """
        from google.oauth2 import credentials as user_credentials
        from google.oauth2 import service_account

        unusable = f"{self.provider_id}: the Google credentials in {role} are not usable"
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CredentialsUnavailable(f"{unusable} ({type(exc).__name__})") from None
        kind = info.get("type") if isinstance(info, dict) else None
        try:
            if kind == "service_account":
                return service_account.Credentials.from_service_account_info(  # type: ignore[no-any-return,no-untyped-call]
                    info, scopes=[CLOUD_PLATFORM_SCOPE]
                )
            if kind == "authorized_user":
                return user_credentials.Credentials.from_authorized_user_info(  # type: ignore[no-any-return,no-untyped-call]
                    info, scopes=[CLOUD_PLATFORM_SCOPE]
                )
        except (ValueError, KeyError) as exc:
            raise CredentialsUnavailable(f"{unusable} ({type(exc).__name__})") from None
        raise CredentialsUnavailable(
            f"{unusable}: type {kind!r} is not supported; use a service account key or "
            "`gcloud auth application-default login`"
        )
