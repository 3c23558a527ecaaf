"""What the A2A conformance kit (a2aproject/a2a-tck, branch 1.0-dev) needs around a drive, and
nothing the drive itself is told of: run by `scripts/a2a-tck`.

- A credential proxy. The kit sends no `Authorization` anywhere, and every call to the drive's
  agent needs an API token; the proxy forwards each request to the drive with
  `Authorization: Bearer <the token in TOKEN_FILE>` added. The drive's site URL is the proxy's,
  so the agent card's interface URL sends the kit back through it.
- A scripted model speaking OpenAI's chat-completions wire format with tool calls, which the
  drive's workers are pointed at (DRIVE_AGENT_MODEL_URL): the real agent runs each task, and
  this stands in for the language model only. The kit says what it wants of a task through the
  messageId's prefix (`tck-artifact-text-…`), which no model sees; the proxy notes each sent
  message's first text beside its messageId, and the model finds the prefix by the text it is
  asked about (the newest such message). Every answer is a call of the agent's `reply` tool.

Usage: python tck_harness.py PROXY_PORT MODEL_PORT DRIVE_URL TOKEN_FILE
"""

import json
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# What the kit's scenarios (scenarios/*.feature) ask of a task by messageId prefix, longest
# first; anything else completes.
REPLIES = [
    ("tck-complete-task", "Hello from TCK"),
    ("tck-artifact-text", "Generated text content"),
]
DEFAULT_REPLY = "Done."

sent_lock = threading.Lock()
# (first text, messageId) of every message sent, oldest first.
sent: list[tuple[str, str]] = []


def note_sent(body: bytes) -> None:
    try:
        request = json.loads(body)
    except ValueError:
        return
    if not isinstance(request, dict) or request.get("method") not in ("SendMessage", "SendStreamingMessage"):
        return
    message = (request.get("params") or {}).get("message") or {}
    texts = [p["text"] for p in message.get("parts") or [] if isinstance(p, dict) and "text" in p]
    if texts and isinstance(message.get("messageId"), str):
        with sent_lock:
            sent.append((texts[0], message["messageId"]))


def reply_for(asked: str) -> str:
    with sent_lock:
        message_id = next((m for text, m in reversed(sent) if asked.startswith(text)), "")
    return next((reply for prefix, reply in REPLIES if message_id.startswith(prefix)), DEFAULT_REPLY)


class Proxy(BaseHTTPRequestHandler):
    drive = ""
    token_file = ""

    def forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if body:
            note_sent(body)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "authorization", "connection")}
        with open(self.token_file) as f:
            headers["Authorization"] = "Bearer " + f.read().strip()
        request = urllib.request.Request(self.drive + self.path, data=body, headers=headers, method=self.command)
        try:
            response = urllib.request.urlopen(request, timeout=60)
        except urllib.error.HTTPError as e:
            response = e
        answer = response.read()
        self.send_response(response.status)
        for k, v in response.headers.items():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = forward
    do_POST = forward

    def log_message(self, *args) -> None:
        pass


class ScriptedModel(BaseHTTPRequestHandler):
    calls = 0

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        asked = json.loads(self.rfile.read(length))
        users = [m for m in asked["messages"] if m.get("role") == "user"]
        text = reply_for(users[-1]["content"] if users else "")
        ScriptedModel.calls += 1
        call = {
            "id": f"call_{ScriptedModel.calls}",
            "type": "function",
            "function": {"name": "reply", "arguments": json.dumps({"text": text})},
        }
        answer = json.dumps({
            "id": f"chatcmpl-{ScriptedModel.calls}",
            "object": "chat.completion",
            "model": asked.get("model", "scripted"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }],
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args) -> None:
        pass


def main(proxy_port: int, model_port: int, drive: str, token_file: str) -> None:
    Proxy.drive = drive.rstrip("/")
    Proxy.token_file = token_file
    model = ThreadingHTTPServer(("127.0.0.1", model_port), ScriptedModel)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    proxy = ThreadingHTTPServer(("127.0.0.1", proxy_port), Proxy)
    print(f"proxy on {proxy_port}, model on {model_port}", flush=True)
    proxy.serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
