"""The provider registry: what the model layer knows about each kind of provider.

Why a registry: everything that differs between providers (how a client is built, which
environment variable holds the key, whether a key or a base URL is required, which model
names exist, what extra goes into the cache key) lives with the provider that owns it.
`ModelSpec` (defined here, with the registry its methods consult), `parse_model` and
`ModelClient` look it up here instead of testing provider names, so adding a provider
touches no shared code: its module registers a `ProviderKind` at import, and
`PROVIDERS.builtins` names the built-in modules, imported on the first lookup.

The registry imports no provider module and no SDK, so it sits below all of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from whowhen.errors import WhowhenError
from whowhen.models.types import ChatRequest, Reply
from whowhen.plugins import Registry


class Provider(Protocol):
    """One live connection to a model: `call` answers one request or raises ProviderError.

    A provider may also define `async close()`; the client awaits it after a run."""

    async def call(self, request: ChatRequest) -> Reply: ...


def _no_check(spec: ModelSpec) -> None:
    return None


def _no_revision(spec: ModelSpec) -> str | None:
    return None


@dataclass(frozen=True)
class ProviderKind:
    """One provider, as registered by its module.

    name: the `provider` part of a model id (`openai` in `openai/gpt-4.1-mini`).
    factory: `(spec, timeout_s) -> Provider`, called once per client run that misses the
        cache; SDK imports belong in it (or in the provider class), not at module top.
    key_env: the environment variable read when the spec names none (`api_key_env`).
    needs_key: whether a call without a key is an error (False: a placeholder is sent).
    needs_base_url: whether the model id is incomplete without `base_url`.
    batch: whether the OpenAI Batch API serves this provider's models (`llm.batch`).
    check_name: raises WhowhenError(field="model") for a name this provider cannot serve.
    revision: the code version of a model that is code, not weights (else None); when set
        it joins the cache key, so an edited model does not get old answers.
    """

    name: str
    factory: Callable[[ModelSpec, float], Provider]
    key_env: str | None = None
    needs_key: bool = True
    needs_base_url: bool = False
    batch: bool = False
    check_name: Callable[[ModelSpec], None] = _no_check
    revision: Callable[[ModelSpec], str | None] = _no_revision


PROVIDERS: Registry[ProviderKind] = Registry(
    "provider",
    "whowhen.model_providers",
    "model",
    builtins=(
        "whowhen.models.openai_provider",
        "whowhen.models.gemini_provider",
        "whowhen.models.scripted_provider",
    ),
)
"""Provider name -> kind. The built-in providers' modules register theirs and are
imported on the first lookup; a provider from outside the package registers through the
entry-point group `whowhen.model_providers`."""


def register(kind: ProviderKind, *, replace: bool = False) -> ProviderKind:
    """Add a provider kind. A second kind under a taken name is an error (two modules
    claiming one provider is a bug), unless `replace` says the swap is meant."""
    return PROVIDERS.add(kind.name, kind, replace=replace)


def unregister(name: str) -> None:
    """Remove a provider kind (for tests that register their own)."""
    PROVIDERS.remove(name)


def known() -> tuple[str, ...]:
    """Registered provider names, sorted."""
    return tuple(sorted(PROVIDERS.names()))


def provider_kind(name: str) -> ProviderKind:
    """The registered kind for `name`; the error names the known ones."""
    if name not in PROVIDERS:
        raise WhowhenError(f"unknown provider {name!r}; known: {', '.join(known())}", field="model")
    return PROVIDERS.get(name)


@dataclass(frozen=True)
class ModelSpec:
    provider: str
    name: str
    base_url: str | None = None
    structured_output: str = "json_schema"
    native_tools: bool = True
    api_key_env: str | None = None

    @property
    def model_id(self) -> str:
        return f"{self.provider}/{self.name}"

    def api_key(self) -> str:
        """The key, read from the environment only when a call is made; never stored."""
        kind = provider_kind(self.provider)
        env = self.api_key_env or kind.key_env or ""
        key = os.environ.get(env) if env else None
        if key:
            return key
        if not kind.needs_key:
            return "not-needed"  # e.g. local servers accept any key; the stand-in takes none
        raise WhowhenError(
            f"no API key: set the environment variable {env}", field=f"models.{self.model_id}"
        )

    def unset_key_env(self) -> str | None:
        """The variable the key is read from, when it is not set: a provider that needs no
        key then sends a placeholder, and a server that wants one refuses it; its error
        names this variable."""
        env = self.api_key_env or provider_kind(self.provider).key_env
        return env if env and not os.environ.get(env) else None

    def cache_view(self) -> dict[str, Any]:
        """The model's part of a response-cache key. Its fields are fixed (changing them
        would orphan every cached answer); a provider whose model is code adds its
        `revision`, so a cached answer belongs to the code that wrote it."""
        view: dict[str, Any] = {
            "provider": self.provider,
            "model": self.name,
            "base_url": self.base_url,
            "structured_output": self.structured_output,
        }
        revision = provider_kind(self.provider).revision(self)
        if revision is not None:
            view["revision"] = revision
        return view
