"""The model layer over real HTTP: the official clients against the scripted test server."""

from __future__ import annotations

import time

import pytest

from whowhen.errors import WhowhenError
from whowhen.models import (
    DEFAULT_PRICES,
    ChatRequest,
    ImagePart,
    Message,
    ModelClient,
    ResponseCache,
    Settings,
    TextPart,
    Usage,
    load_prices,
    parse_model,
)
from whowhen.standin.server import Behaviour, TestServer

PRICES = load_prices(DEFAULT_PRICES)
SCHEMA = {
    "type": "object",
    "properties": {"agent": {"type": "string", "enum": ["solver"]}, "step": {"type": "integer"}},
}


def _req(i: int = 0, **kw) -> ChatRequest:
    return ChatRequest(
        (
            Message.text("system", "attribute"),
            Message.text("user", f"item {i}\n[0] user: task\n[1] solver: 2+2=5"),
        ),
        schema=SCHEMA,
        **kw,
    )


def _client(
    server: TestServer, tmp_path=None, model: str = "openai-compatible/mock", **kw
) -> ModelClient:
    base = server.gemini_url if model.startswith("gemini") else server.url
    spec = parse_model(
        model, {model: {"base_url": base, "structured_output": kw.pop("structured", "json_schema")}}
    )
    cache = ResponseCache(tmp_path / "cache") if tmp_path is not None else None
    return ModelClient(spec, PRICES, cache, progress=False, **kw)


@pytest.fixture
def server():
    with TestServer() as srv:
        yield srv


def test_openai_compatible_call_with_structured_output(server) -> None:
    res = _client(server).complete([_req()])[0]
    assert res.ok and '"agent": "solver"' in res.text and '"step": 1' in res.text
    fmt = server.bodies[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == SCHEMA
    assert res.usage.input_tokens > 0 and res.cost_usd == pytest.approx(
        PRICES.cost("openai-compatible/mock", res.usage)
    )


def test_llama_cpp_style_structured_output(server) -> None:
    _client(server, structured="json_object_schema").complete([_req()])
    assert server.bodies[0]["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_gemini_through_google_genai(server, monkeypatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    res = _client(server, model="gemini/mock").complete([_req()])[0]
    assert res.ok and '"step": 1' in res.text
    assert ":generateContent" in server.requests[0][0]
    config = server.bodies[0]["generationConfig"]
    assert config["responseMimeType"] == "application/json"


def test_images_are_sent_as_parts(server, tmp_path) -> None:
    img = tmp_path / "x.png"
    img.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    req = ChatRequest((Message("user", (TextPart("what is this?"), ImagePart(str(img)))),))
    _client(server).complete([req])
    content = server.bodies[0]["messages"][0]["content"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_cache_makes_a_rerun_free(server, tmp_path) -> None:
    reqs = [_req(i) for i in range(20)]
    first = _client(server, tmp_path)
    a = first.complete(reqs)
    assert len(server.requests) == 20 and first.stats.calls == 20
    second = _client(server, tmp_path)
    b = second.complete(reqs)
    assert len(server.requests) == 20, "a rerun made new calls"
    assert second.stats.cache_hits == 20 and second.stats.spent_usd == 0
    assert [r.text for r in a] == [r.text for r in b] and all(r.cached for r in b)
    assert [r.cost_usd for r in a] == [r.cost_usd for r in b]


def test_cache_key_covers_the_full_request(tmp_path) -> None:
    spec = parse_model("openai/gpt-4.1-mini")
    base = ResponseCache.key(spec, _req())
    assert base == ResponseCache.key(spec, _req())
    assert base != ResponseCache.key(spec, _req(sample=1))
    assert base != ResponseCache.key(spec, _req(settings=Settings(temperature=0.7)))
    assert base != ResponseCache.key(parse_model("openai/gpt-4.1"), _req())
    other = parse_model("openai-compatible/x", {"openai-compatible/x": {"base_url": "http://a"}})
    assert ResponseCache.key(other, _req()) != ResponseCache.key(
        parse_model("openai-compatible/x", {"openai-compatible/x": {"base_url": "http://b"}}),
        _req(),
    )
    img1, img2 = tmp_path / "1.png", tmp_path / "2.png"
    img1.write_bytes(b"one")
    img2.write_bytes(b"two")

    def with_image(path):
        return ChatRequest((Message("user", (ImagePart(str(path)),)),))

    assert ResponseCache.key(spec, with_image(img1)) != ResponseCache.key(spec, with_image(img2))
    assert _req().tag == "" and base == ResponseCache.key(spec, _req(tag="ignored"))


def test_faults_are_retried_or_recorded(tmp_path) -> None:
    behaviour = Behaviour(fail_rate=0.2, hang_s=1.2, seed=3, retry_after_s=0.01)
    with TestServer(behaviour) as srv:
        client = _client(
            srv, tmp_path, max_concurrency=32, timeout_s=0.6, backoff_s=0.02, max_retries=3
        )
        results = client.complete([_req(i) for i in range(100)])
    injected = sum(1 for _, fault in srv.requests if fault)
    assert injected > 5
    assert all(r.ok or r.error for r in results) and len(results) == 100
    assert client.stats.retries == sum(r.attempts - 1 for r in results) > 0
    assert sum(r.ok for r in results) >= 97
    # Every request the server saw was an attempt, and every answer came from a request
    # answered in full (a clean one, or a hang the client outwaited on a loaded machine).
    # Equality does not hold: under load an attempt can time out before the in-process
    # server has read it.
    assert len(srv.requests) <= sum(r.attempts for r in results)
    answered = sum(1 for _, fault in srv.requests if fault in (None, "hang"))
    assert sum(r.ok for r in results) <= answered


@pytest.mark.parametrize("cached", [True, False], ids=["cache", "no-cache"])
def test_identical_requests_in_flight_are_sent_once(tmp_path, cached) -> None:
    """Single-flight: 12 requests, 3 distinct, go out as 3 calls; each duplicate gets its
    first's answer as a cache hit would give it, and costs nothing more."""
    reqs = [_req(i % 3, tag=f"run {i}") for i in range(12)]  # the tag is not in the key
    with TestServer(Behaviour(latency_s=0.05)) as srv:
        client = _client(srv, tmp_path if cached else None)
        results = client.complete(reqs)
        assert len(srv.requests) == 3 and len(results) == 12
        first, dups = results[:3], results[3:]
        assert all(r.ok for r in results)
        assert [r.text for r in results] == [first[i % 3].text for i in range(12)]
        assert not any(r.cached for r in first) and all(r.cached for r in dups)
        assert all(r.attempts == 0 and r.latency_s == 0 for r in dups)
        assert [(r.usage, r.cost_usd) for r in dups] == [
            (first[i % 3].usage, first[i % 3].cost_usd) for i in range(3, 12)
        ]
        stats = client.stats
        assert (stats.calls, stats.shared, stats.cache_hits, stats.failures) == (3, 9, 0, 0)
        assert stats.spent_usd == pytest.approx(sum(r.cost_usd for r in first))
        if cached:  # a rerun's cache hits look exactly like the shared answers
            again = _client(srv, tmp_path).complete(reqs)
            assert len(srv.requests) == 3 and all(r.cached for r in again)
            assert [(r.text, r.usage, r.cost_usd) for r in again] == [
                (r.text, r.usage, r.cost_usd) for r in results
            ]


def test_a_shared_failure_reaches_every_waiter_and_is_retried_once() -> None:
    """Two 500s, one retry allowed: the one call fails after two attempts (not two per
    waiter), and all four identical requests get that failure."""
    with TestServer(Behaviour(script=["500", "500"])) as srv:
        client = _client(srv, max_retries=1, backoff_s=0.01)
        results = client.complete([_req()] * 4)
        assert len(srv.requests) == 2
    assert all(not r.ok and r.error == results[0].error for r in results)
    assert results[0].error.startswith("server") and results[0].attempts == 2
    assert [r.attempts for r in results[1:]] == [0, 0, 0] and not any(r.cached for r in results)
    stats = client.stats
    assert (stats.calls, stats.failures, stats.shared, stats.retries) == (0, 1, 3, 1)
    assert stats.errors == {"server": 1} and stats.spent_usd == 0


def test_rate_limit_honours_retry_after_and_shrinks_concurrency(tmp_path) -> None:
    behaviour = Behaviour(retry_after_s=0.5, script=["429"])
    with TestServer(behaviour) as srv:
        client = _client(srv, max_concurrency=8)
        start = time.monotonic()
        res = client.complete([_req()])[0]
    assert res.ok and res.attempts == 2 and client.stats.retries == 1
    assert time.monotonic() - start >= 0.5


def test_bad_request_is_not_retried(server) -> None:
    spec = parse_model(
        "openai-compatible/mock", {"openai-compatible/mock": {"base_url": server.url + "/wrong"}}
    )
    client = ModelClient(spec, PRICES, None, progress=False)
    res = client.complete([_req()])[0]
    assert not res.ok and res.error.startswith("bad_request") and res.attempts == 1


def test_cost_limit_stops_cleanly(server) -> None:
    client = _client(server, max_concurrency=1, cost_limit_usd=0.0001)
    results = client.complete([_req(i) for i in range(10)])
    done = [r for r in results if r.ok]
    skipped = [r for r in results if not r.ok]
    assert 1 <= len(done) < 10 and all(r.error.startswith("cost_limit") for r in skipped)
    assert len(server.requests) == len(done)


def test_prices_and_metadata() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=500_000, cached_tokens=200_000)
    assert PRICES.cost("openai/gpt-4.1-mini", usage) == pytest.approx(
        0.8 * 0.40 + 0.2 * 0.10 + 0.5 * 1.60
    )
    assert PRICES.cost("openai/unknown", usage) == 0
    assert PRICES.price("openai-compatible/smollm2-135m").open_weight
    assert PRICES.as_of is not None


def test_model_ids_and_keys(monkeypatch) -> None:
    with pytest.raises(WhowhenError, match="provider/name"):
        parse_model("anthropic/claude")
    with pytest.raises(WhowhenError, match="needs a base_url"):
        parse_model("openai-compatible/x")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(WhowhenError, match="OPENAI_API_KEY"):
        parse_model("openai/gpt-4.1-mini").api_key()
    monkeypatch.setenv("MY_KEY", "k")
    spec = parse_model("m", {"m": {"id": "openai/gpt-4.1", "api_key_env": "MY_KEY"}})
    assert spec.api_key() == "k" and spec.model_id == "openai/gpt-4.1"


def test_batch_mode_submits_once_resumes_and_caches(tmp_path) -> None:
    from whowhen.models.batch import BatchPending, BatchRunner

    reqs = [_req(i) for i in range(6)]
    with TestServer(Behaviour(batch_polls=3)) as srv:
        first = BatchRunner(_client(srv, tmp_path), tmp_path / "state", poll_s=0.01, max_wait_s=0.0)
        with pytest.raises(BatchPending, match="rerun to collect"):
            first.complete(reqs)  # interrupted while the batch runs
        resumed = BatchRunner(_client(srv, tmp_path), tmp_path / "state", poll_s=0.01)
        results = resumed.complete(reqs)
        assert [p for p, _ in srv.requests] == ["/v1/batches"]  # submitted once, no live call
        assert all(r.ok and '"step": 1' in r.text for r in results)
        live = _client(srv).complete(reqs[:1])[0]
        assert results[0].cost_usd == pytest.approx(live.cost_usd / 2)  # batch price
        again = BatchRunner(_client(srv, tmp_path), tmp_path / "state", poll_s=0.01)
        again.complete(reqs)
        assert again.stats.cache_hits == 6 and len(srv.requests) == 2
    assert not list((tmp_path / "state").glob("*.json"))


def test_batch_mode_sends_and_pays_identical_requests_once(tmp_path) -> None:
    from whowhen.models.batch import BatchRunner

    reqs = [_req(i % 2) for i in range(6)]
    with TestServer() as srv:
        runner = BatchRunner(_client(srv), tmp_path / "state", poll_s=0.01)
        results = runner.complete(reqs)
        lines = srv.files["file-1"].decode().splitlines()
    assert len(lines) == 2 and all(r.ok for r in results)
    assert [r.text for r in results] == [results[i % 2].text for i in range(6)]
    assert [r.cached for r in results] == [False, False, True, True, True, True]
    assert [r.cost_usd for r in results] == [results[i % 2].cost_usd for i in range(6)]
    assert (runner.stats.calls, runner.stats.shared) == (2, 4)
    assert runner.stats.spent_usd == pytest.approx(results[0].cost_usd + results[1].cost_usd)
