"""A stand-in for ``llama-server``: what the experiment needs of it, over real HTTP.

``python tests/fake_llama_server.py --host 127.0.0.1 --port N [--loading S] [--crash]``

- ``/health``: 503 while "loading" (the first ``--loading`` seconds), then 200;
- ``/tokenize``: one token per 4 characters of ``content``;
- ``/v1/chat/completions``: answers as the small Qwen models do — the tool call as a
  fenced JSON block in ``content``, no ``tool_calls`` — and counts like llama-server:
  ``usage`` with ``prompt_tokens_details.cached_tokens`` and ``timings`` with
  ``cache_n``/``prompt_n``, the cached part being the prefix shared with the previous
  request (one slot, as ``--parallel 1``).

Each request body is appended to ``$FAKE_LLAMA_LOG`` (JSON lines) for the test to read.
``--crash`` exits at once with a message, as a server that cannot load its model does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


class State:
    started = time.monotonic()
    loading = 0.0
    previous = ""


def reply(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    goal = messages[1]["content"]
    names = {tool["function"]["name"]: tool for tool in body.get("tools", [])}
    results = [m for m in messages if m["role"] == "tool"]
    match = re.search(r"#(\d+)", goal)
    if not results and match:
        read = next(name for name in names if name.startswith("get_"))
        content = (
            "I will read it first.\n```json\n"
            + json.dumps({"name": read, "arguments": {"orderId": int(match.group(1))}})
            + "\n```"
        )
    elif len(results) == 1 and "cancel_order" in names:
        order = json.loads(results[0]["content"].splitlines()[0])
        content = json.dumps(
            {
                "name": "cancel_order",
                "arguments": {
                    "orderId": order["id"],
                    "reason": "customer_request",
                    "expectedVersion": order["version"],
                },
            }
        )
    else:
        content = "Done."
    return {"role": "assistant", "content": content}


class Handler(BaseHTTPRequestHandler):
    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/health":
            loading = time.monotonic() - State.started < State.loading
            self._send(503 if loading else 200, {"status": "loading" if loading else "ok"})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        log = os.environ.get("FAKE_LLAMA_LOG")
        if log:
            with open(log, "a") as out:
                out.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if self.path == "/tokenize":
            self._send(200, {"tokens": list(range(tokens(body["content"])))})
            return
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": "not found"})
            return
        prompt_text = json.dumps(body.get("tools", [])) + json.dumps(body["messages"])
        # Characters, as intended: the fake counts 4 characters a token.
        shared = len(os.path.commonprefix([State.previous, prompt_text]))  # noqa: RUF071
        State.previous = prompt_text
        prompt, cached = tokens(prompt_text), shared // 4
        message = reply(body)
        completion = tokens(message["content"])
        self._send(
            200,
            {
                "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": cached},
                },
                "timings": {"cache_n": cached, "prompt_n": prompt - cached,
                            "predicted_n": completion},
            },
        )  # fmt: skip

    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--loading", type=float, default=0.0)
    parser.add_argument("--crash", action="store_true")
    args = parser.parse_args()
    if args.crash:
        print("error: failed to load model 'missing.gguf'", flush=True)
        sys.exit(1)
    State.loading = args.loading
    print(f"fake llama-server listening on {args.host}:{args.port}", flush=True)
    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
