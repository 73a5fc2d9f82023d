"""The provider registry: providers register themselves, the client and specs ask the
registry instead of testing provider names, cache keys of the HTTP providers are those of
before the registry, and the scripted provider is generic (responders register with it)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import whowhen.standin  # noqa: F401  registers scripted/standin (the model layer does not)
from whowhen.errors import WhowhenError
from whowhen.models import (
    DEFAULT_PRICES,
    ChatRequest,
    Message,
    ModelClient,
    ModelSpec,
    ProviderError,
    ProviderKind,
    Reply,
    ResponseCache,
    Usage,
    known,
    load_prices,
    parse_model,
    provider_kind,
    register,
)
from whowhen.models import provider as registry
from whowhen.models import scripted_provider as sp

from .conftest import ROOT

PRICES = load_prices(DEFAULT_PRICES)
REQUEST = ChatRequest((Message.text("user", "hi"),))


class Echo:
    """A provider defined by a test: answers with the model name and the prompt."""

    closed = 0

    def __init__(self, spec: ModelSpec, timeout_s: float) -> None:
        self.spec = spec

    async def call(self, request: ChatRequest) -> Reply:
        return Reply(f"{self.spec.name}: {request.messages[-1].joined_text()}", Usage(3, 2, 0))

    async def close(self) -> None:
        Echo.closed += 1


@pytest.fixture
def echo() -> Iterator[ProviderKind]:
    def check_name(spec: ModelSpec) -> None:
        if spec.name == "forbidden":
            raise WhowhenError("echo has no model 'forbidden'", field="model")

    kind = register(
        ProviderKind("echo", Echo, key_env="ECHO_KEY", needs_key=False, check_name=check_name)
    )
    yield kind
    registry.unregister("echo")


def test_a_registered_provider_is_used_by_the_client(echo: ProviderKind) -> None:
    spec = parse_model("echo/parrot")
    assert "echo" in known() and provider_kind("echo") is echo
    client = ModelClient(spec, PRICES, progress=False)
    [res] = client.complete([REQUEST])
    assert res.ok and res.text == "parrot: hi" and res.usage == Usage(3, 2, 0)
    assert Echo.closed >= 1  # the client closed the provider after the run
    assert spec.api_key() == "not-needed"  # needs_key=False and ECHO_KEY unset
    assert spec.cache_view() == {
        "provider": "echo",
        "model": "parrot",
        "base_url": None,
        "structured_output": "json_schema",
    }
    with pytest.raises(WhowhenError, match="no model 'forbidden'"):
        parse_model("echo/forbidden")


def test_an_injected_provider_wins_over_the_registry(echo: ProviderKind) -> None:
    class Fixed(Echo):
        async def call(self, request: ChatRequest) -> Reply:
            return Reply("fixed", Usage(1, 1, 0))

    spec = parse_model("echo/parrot")
    [res] = ModelClient(spec, PRICES, progress=False, provider=Fixed(spec, 1.0)).complete([REQUEST])
    assert res.text == "fixed"


def test_registering_a_taken_name_needs_replace(echo: ProviderKind) -> None:
    other = ProviderKind("echo", Echo, needs_key=True)
    with pytest.raises(WhowhenError, match="already registered"):
        register(other)
    assert register(echo) is echo  # the same record again is harmless
    register(other, replace=True)
    assert provider_kind("echo") is other


def test_unknown_providers_are_named_with_the_known_ones() -> None:
    builtin = ["gemini", "openai", "openai-compatible", "scripted"]
    assert set(builtin) <= set(known())
    with pytest.raises(WhowhenError, match="unknown provider 'anthropic'; known: ") as info:
        provider_kind("anthropic")
    assert all(name in str(info.value) for name in builtin)
    assert info.value.field == "model"
    with pytest.raises(WhowhenError, match="provider/name") as info:
        parse_model("anthropic/claude")
    assert all(name in str(info.value) for name in builtin)


def test_builtin_provider_settings() -> None:
    openai, compat = provider_kind("openai"), provider_kind("openai-compatible")
    gemini, scripted = provider_kind("gemini"), provider_kind("scripted")
    assert (openai.key_env, openai.needs_key, openai.needs_base_url) == (
        "OPENAI_API_KEY",
        True,
        False,
    )
    assert (compat.key_env, compat.needs_key, compat.needs_base_url) == (
        "OPENAI_COMPATIBLE_API_KEY",
        False,
        True,
    )
    assert (gemini.key_env, gemini.needs_key) == ("GEMINI_API_KEY", True)
    assert (scripted.key_env, scripted.needs_key) == (None, False)
    assert [k.batch for k in (openai, compat, gemini, scripted)] == [True, True, False, False]


@pytest.mark.parametrize(
    ("model", "settings", "view", "key"),
    [
        (
            "openai-compatible/mock",
            {"base_url": "http://x/v1", "structured_output": "json_object_schema"},
            {
                "provider": "openai-compatible",
                "model": "mock",
                "base_url": "http://x/v1",
                "structured_output": "json_object_schema",
            },
            "984b00ae05f5ec8a",
        ),
        (
            "openai/gpt-4.1-mini",
            {},
            {
                "provider": "openai",
                "model": "gpt-4.1-mini",
                "base_url": None,
                "structured_output": "json_schema",
            },
            "8e3cfe26e0b1e42e",
        ),
        (
            "gemini/gemini-2.5-flash",
            {},
            {
                "provider": "gemini",
                "model": "gemini-2.5-flash",
                "base_url": None,
                "structured_output": "json_schema",
            },
            "f5af076a342cd4cd",
        ),
    ],
)
def test_cache_keys_of_http_providers_are_unchanged(model, settings, view, key) -> None:
    """The literal views and keys the code before the registry produced: a change here
    would make every cached answer unreachable."""
    spec = parse_model(model, {model: settings})
    assert spec.cache_view() == view
    assert ResponseCache.key(spec, REQUEST) == key


def test_scripted_model_without_a_responder_is_a_clear_error() -> None:
    with pytest.raises(WhowhenError, match="unknown scripted model 'scripted/nobody'") as info:
        parse_model("scripted/nobody")
    assert "scripted/standin" in str(info.value) and info.value.field == "model"
    spec = ModelSpec("scripted", "nobody")
    with pytest.raises(ProviderError, match="bad_request: unknown scripted model"):
        sp.ScriptedProvider(spec)
    with pytest.raises(WhowhenError, match="unknown scripted model"):
        spec.cache_view()  # no responder, no revision: refused, not keyed without one


def test_the_stand_in_is_resolved_on_its_first_lookup_not_by_an_import() -> None:
    """No caller imports the stand-in for its side effect: the model layer names its
    module, and the first lookup of `scripted/standin` imports it (and no sooner)."""
    _fresh_python(
        "import sys; import whowhen.models as m; "
        "assert 'whowhen.standin' not in sys.modules; "
        "m.parse_model('scripted/standin'); "
        "assert 'whowhen.standin' in sys.modules"
    )


def test_an_unknown_scripted_model_names_the_known_ones() -> None:
    with pytest.raises(WhowhenError, match=r"unknown scripted model 'scripted/nope'.*standin"):
        parse_model("scripted/nope")


def test_a_registered_responder_answers_and_its_source_is_its_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sp, "RESPONDERS", dict(sp.RESPONDERS))  # restored afterwards
    source = tmp_path / "rules.py"
    source.write_text("rule 1\n")
    sp.register_responder("shout", lambda prompt, schema: prompt.upper(), source)
    spec = parse_model("scripted/shout")
    [res] = ModelClient(spec, PRICES, progress=False).complete([REQUEST])
    assert res.text == "HI" and res.usage == Usage(1, 1, 0)
    first = spec.cache_view()["revision"]
    assert first == sp.source_revision(source)
    with pytest.raises(WhowhenError, match="already registered"):
        sp.register_responder("shout", lambda prompt, schema: prompt, source)
    source.write_text("rule 2\n")  # an edited responder is a new model version
    sp.register_responder("shout", lambda prompt, schema: prompt.upper(), source, replace=True)
    assert spec.cache_view()["revision"] != first


def _fresh_python(code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_model_layer_imports_no_code_above_it_and_no_sdk() -> None:
    """Layering: whowhen.models knows no benchmark, stage or stand-in code, and importing
    it (which registers every built-in provider) loads neither heavy SDK."""
    _fresh_python(
        "import sys, whowhen.models\n"
        "above = ('benchmarks', 'agents', 'injection', 'attribution', 'analysis', 'standin')\n"
        "bad = [m for m in sys.modules if m.split('.')[:2][-1] in above"
        " and m.startswith('whowhen.')]\n"
        "assert not bad, bad\n"
        "assert 'openai' not in sys.modules and 'google.genai' not in sys.modules\n"
        "from whowhen.models.provider import known\n"
        "assert set(known()) == {'openai', 'openai-compatible', 'gemini', 'scripted'}\n"
    )


@pytest.mark.parametrize(
    "module",
    [
        "whowhen.registry",
        "whowhen.rollouts",
        "whowhen.continuation",
        "whowhen.attribution.factory",
        "whowhen.attribution.stage",
        "whowhen.injection.stage",
        "whowhen.taxonomy_stage",
        "whowhen.feedback.stage",
    ],
)
def test_modules_that_make_clients_know_the_standin(module: str) -> None:
    """Every stage-level module that builds clients from config names has `scripted/standin`
    registered once it is imported (they reach it through `whowhen.registry`)."""
    _fresh_python(
        f"import {module}\n"
        "from whowhen.models import parse_model\n"
        "assert parse_model('scripted/standin').cache_view()['revision']\n"
    )
