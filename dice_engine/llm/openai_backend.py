"""An OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp's server, Ollama, hosted APIs).

Plain HTTP from the standard library: `POST {base_url}/chat/completions`, with `stream: true`
read as server-sent events so that the editor sees the reply grow and a cancel stops it between
events. Every failure (refused connection, timeout, HTTP status, malformed body or event) is a
one-line `ModelError`; the API key, read from the configured environment variable, is sent as
`Authorization: Bearer …` and never appears in a message.
"""
from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Iterator

from .backend import Message, ModelCancelled, ModelError, OnText
from .config import LLMConfig

MAX_ERROR_BODY = 200
MAX_REPLY_CHARS = 1 << 20


class OpenAIBackend:
    def __init__(self, config: LLMConfig):
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"

    def complete(self, messages: list[Message], *, cancel: threading.Event | None = None,
                 on_text: OnText | None = None) -> str:
        body = {"model": self.config.model, "messages": messages, "max_tokens": self.config.max_tokens,
                "temperature": self.config.temperature, "stream": self.config.stream}
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream, application/json"}
        if key := self.config.api_key():
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers,
                                         method="POST")
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout_s) as response:
                if self.config.stream and "text/event-stream" in response.headers.get("Content-Type", ""):
                    return self._read_stream(response, started, cancel, on_text)
                text = _message_text(_json(response.read(MAX_REPLY_CHARS * 4)))
                if on_text is not None:
                    on_text(text)
                return text
        except urllib.error.HTTPError as e:
            raise ModelError(_http_error(e, self.url)) from None
        except urllib.error.URLError as e:
            if isinstance(e.reason, (socket.timeout, TimeoutError)):
                raise ModelError(self._timed_out()) from None
            raise ModelError(f"cannot reach the model at {self.url}: {e.reason}") from None
        except (socket.timeout, TimeoutError):
            raise ModelError(self._timed_out()) from None
        except (http.client.HTTPException, ConnectionError) as e:
            raise ModelError(f"the model at {self.url} broke the connection ({type(e).__name__})") from None

    def _timed_out(self) -> str:
        return f"the model at {self.url} did not answer within {self.config.timeout_s:g} s"

    def _read_stream(self, response: Any, started: float, cancel: threading.Event | None,
                     on_text: OnText | None) -> str:
        pieces: list[str] = []
        size = 0
        for data in _events(response):
            if cancel is not None and cancel.is_set():
                raise ModelCancelled("cancelled while the model was replying")
            if time.monotonic() - started > self.config.timeout_s:
                raise ModelError(f"the model at {self.url} was still replying after "
                                 f"{self.config.timeout_s:g} s")
            if data == "[DONE]":
                break
            event = _json(data.encode())
            if "error" in event:
                raise ModelError(f"the model reported an error: {_error_text(event['error'])}")
            piece = _delta_text(event)
            if piece:
                pieces.append(piece)
                size += len(piece)
                if size > MAX_REPLY_CHARS:
                    raise ModelError("the model's reply exceeds 1 MiB; stopped reading")
                if on_text is not None:
                    on_text(piece)
        if not pieces:
            raise ModelError("the model's event stream ended without any text")
        return "".join(pieces)


def _events(response: Any) -> Iterator[str]:
    """The `data:` payloads of a server-sent event stream (multi-line data joined by newlines)."""
    data: list[str] = []
    for raw in response:
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue                       # a comment (keep-alive)
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
        elif field not in ("event", "id", "retry"):
            raise ModelError(f"malformed event stream from the model: unexpected line {line[:60]!r}")
    if data:
        yield "\n".join(data)


def _json(raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ModelError(f"the model's reply is not JSON: {raw[:60]!r}") from None
    if not isinstance(value, dict):
        raise ModelError("the model's reply is not a JSON object")
    return value


def _message_text(body: dict[str, Any]) -> str:
    if "error" in body:
        raise ModelError(f"the model reported an error: {_error_text(body['error'])}")
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ModelError("the model's reply has no choices[0].message.content") from None
    if not isinstance(content, str) or not content:
        raise ModelError("the model's reply is empty")
    return content


def _delta_text(event: dict[str, Any]) -> str:
    try:
        choice = event["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise ModelError("malformed event from the model: no choices[0]") from None
    if not isinstance(choice, dict):
        raise ModelError("malformed event from the model: choices[0] is not an object")
    delta = choice.get("delta") or choice.get("message") or {}
    content = delta.get("content") if isinstance(delta, dict) else None
    if content is not None and not isinstance(content, str):
        raise ModelError("malformed event from the model: content is not text")
    return content or ""


def _error_text(error: Any) -> str:
    text = error.get("message", error) if isinstance(error, dict) else error
    return " ".join(str(text).split())[:MAX_ERROR_BODY]


def _http_error(error: urllib.error.HTTPError, url: str) -> str:
    try:
        body = error.read(4096).decode("utf-8", errors="replace")
    except OSError:
        body = ""
    detail = body
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and "error" in parsed:
            detail = _error_text(parsed["error"])
    except ValueError:
        pass
    detail = " ".join(detail.split())[:MAX_ERROR_BODY]
    why = {401: "the API key was refused", 403: "access was refused", 404: "no such endpoint or model",
           429: "rate limited, try again later"}.get(error.code, error.reason or "")
    return f"the model at {url} answered HTTP {error.code} ({why}){': ' + detail if detail else ''}"
