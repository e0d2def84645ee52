"""A chat-completions server that replies from a script: `python scripted_server.py SCRIPT LOG`.

It listens on 127.0.0.1 (a free port, printed on stdout as `PORT <n>` once listening) and
answers the n-th POST to /v1/chat/completions with the n-th entry of the JSON list in SCRIPT
(the last entry repeats). Every request is appended to LOG as one JSON line (path, Authorization
header, body). An entry is an object:
  {"content": TEXT}                 a normal reply (server-sent events when the request streams)
  {"content": TEXT, "delay_s": S}   the same after S seconds (a slow model)
  {"status": 429, "body": {...}}    an HTTP error with a JSON body
  {"events": RAW}                   RAW written verbatim as an event stream (malformed streams)
"""
from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    script: list[dict] = []
    log_path = ""
    served = 0
    lock = threading.Lock()

    def log_message(self, format: str, *args: object) -> None:   # quiet
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        request = json.loads(body or b"{}")
        with Handler.lock:
            entry = self.script[min(Handler.served, len(self.script) - 1)]
            Handler.served += 1
            with open(self.log_path, "a") as log:
                log.write(json.dumps({"path": self.path, "authorization": self.headers.get("Authorization"),
                                      "body": request}) + "\n")
        if self.path != "/v1/chat/completions":
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        time.sleep(entry.get("delay_s", 0))
        if "status" in entry:
            return self._json(entry["status"], entry.get("body", {}))
        if "events" in entry:
            return self._events([entry["events"]])
        content = entry["content"]
        if not request.get("stream"):
            return self._json(200, {"id": "x", "object": "chat.completion", "model": request.get("model"),
                                    "choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": content}}]})
        pieces = [content[i:i + 40] for i in range(0, len(content), 40)]
        chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
        chunks += [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        self._events([f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"],
                     pause_s=entry.get("pause_s", 0))

    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _events(self, parts: list[str], pause_s: float = 0) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for part in parts:
                self.wfile.write(part.encode())
                self.wfile.flush()
                time.sleep(pause_s)
        except (BrokenPipeError, ConnectionResetError):
            pass     # the client stopped reading (a cancel)
        self.close_connection = True


def main() -> None:
    script_path, log_path = sys.argv[1], sys.argv[2]
    with open(script_path) as f:
        Handler.script = json.load(f)
    Handler.log_path = log_path
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
