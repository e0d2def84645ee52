"""The openai backend against a real HTTP server process on 127.0.0.1 that speaks the
chat-completions protocol from a script: plain and streamed replies, the API key, slow replies,
malformed event streams, HTTP errors and cancellation."""
from __future__ import annotations

import threading
import time

import pytest

from dice_engine.llm import LLMConfig, ModelCancelled, ModelError, make_backend

MESSAGES = [{"role": "user", "content": "write a kernel"}]


def backend(url: str, **kw):
    return make_backend(LLMConfig(base_url=url, model="scripted", **kw))


@pytest.mark.parametrize("stream", [False, True])
def test_reply_text_arrives_whole_and_in_pieces(scripted_model, stream):
    text = "```cuda\n__global__ void k() {}\n```\n" * 5
    model = scripted_model([{"content": text}])
    pieces: list[str] = []
    assert backend(model.url, stream=stream).complete(MESSAGES, on_text=pieces.append) == text
    assert "".join(pieces) == text and (len(pieces) > 1) == stream
    (request,) = model.requests()
    assert request["body"]["model"] == "scripted" and request["body"]["stream"] is stream
    assert request["body"]["messages"] == MESSAGES


def test_api_key_is_read_from_the_named_variable_and_sent_as_bearer(scripted_model, monkeypatch):
    monkeypatch.setenv("MY_MODEL_KEY", "sk-test-123")
    model = scripted_model([{"content": "ok"}])
    backend(model.url, api_key_env="MY_MODEL_KEY").complete(MESSAGES)
    assert model.requests()[0]["authorization"] == "Bearer sk-test-123"


def test_a_slow_reply_past_the_timeout_is_a_clear_error(scripted_model):
    model = scripted_model([{"content": "late", "delay_s": 5}])
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"did not answer within 0.5 s"):
        backend(model.url, timeout_s=0.5).complete(MESSAGES)
    assert time.monotonic() - started < 4


@pytest.mark.parametrize("status,words", [
    (429, "HTTP 429 (rate limited, try again later): slow down"),
    (500, "HTTP 500 (Internal Server Error): model crashed"),
    (401, "HTTP 401 (the API key was refused)"),
])
def test_http_errors_name_the_status_and_the_servers_reason(scripted_model, status, words):
    reason = {429: "slow down", 500: "model crashed", 401: "bad key"}[status]
    model = scripted_model([{"status": status, "body": {"error": {"message": reason}}}])
    with pytest.raises(ModelError) as info:
        backend(model.url).complete(MESSAGES)
    assert words in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("events,words", [
    ("data: {not json\n\n", "not JSON"),
    ("data: {\"choices\": []}\n\n", "no choices[0]"),
    ("garbage line\n\n", "malformed event stream"),
    ("data: [DONE]\n\n", "without any text"),
    ("data: {\"error\": {\"message\": \"context too long\"}}\n\n", "context too long"),
    ("data: {\"choices\": [{\"delta\": {\"content\": 5}}]}\n\n", "content is not text"),
])
def test_malformed_event_streams_are_one_line_errors(scripted_model, events, words):
    model = scripted_model([{"events": events}])
    with pytest.raises(ModelError) as info:
        backend(model.url).complete(MESSAGES)
    assert words in str(info.value)


def test_a_wrong_path_is_a_clear_error(scripted_model):
    model = scripted_model([{"content": "fine"}])
    with pytest.raises(ModelError, match="no such endpoint"):
        make_backend(LLMConfig(base_url=model.url + "/wrong", model="m", stream=False)).complete(MESSAGES)


def test_cancel_stops_a_streaming_reply_between_events(scripted_model):
    model = scripted_model([{"content": "x" * 4000, "pause_s": 0.05}])   # 100 events, 5 s in all
    cancel = threading.Event()
    started = time.monotonic()
    with pytest.raises(ModelCancelled):
        backend(model.url).complete(MESSAGES, cancel=cancel, on_text=lambda _piece: cancel.set())
    assert time.monotonic() - started < 2


def test_nothing_listening_is_a_clear_error():
    with pytest.raises(ModelError, match="cannot reach the model at http://127.0.0.1:9/v1"):
        backend("http://127.0.0.1:9/v1", timeout_s=2).complete(MESSAGES)
