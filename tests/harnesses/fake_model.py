#!/usr/bin/python3
"""A fake model server on 127.0.0.1 that speaks just enough of four model APIs
to drive a real agent harness through one tool call and a final answer:

  Anthropic Messages (SSE or JSON)   POST .../v1/messages            Claude Code
  OpenAI Responses (SSE)             POST .../responses              Codex
  OpenAI Chat Completions (SSE/JSON) POST .../chat/completions       opencode
  Gemini generateContent (SSE/JSON)  POST ...:streamGenerateContent  Gemini CLI
                                     POST ...:generateContent

First turn (no tool result in the conversation yet, and the request offers the
tool): a call of the harness's shell tool with COMMAND, or (scenario "read") of
its own file-reading tool with READ_PATH. Second turn: a final answer. A request
that offers neither tool (titles, summaries, classifiers) gets a short text or,
when it asks for JSON, a small JSON object.

Every request is appended to the record file as one JSON line
{"path", "api", "body", "tools", "answer"}: the tool result the harness sent
back is in "body", which is where a test looks for a secret's marker.

Python 3 standard library only. Run standalone for a look:
  fake_model.py --record /some/file.jsonl --command 'cat ~/.ssh/id_ed25519'
prints "PORT <n>" and serves until killed.
"""
import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SHELL_TOOLS = ["Bash", "bash", "run_shell_command", "shell", "shell_command", "exec_command",
               "local_shell"]
READ_TOOLS = ["Read", "read", "read_file", "view", "read_many_files"]
PATH_KEYS = ["file_path", "filePath", "absolute_path", "path"]
FINAL = "All done: the command ran."


class Config:
    def __init__(self, record, scenario="shell", command="true", read_path="/dev/null"):
        self.record = record
        self.scenario = scenario
        self.command = command
        self.read_path = read_path
        self.lock = threading.Lock()
        self.calls = 0


# ---------------------------------------------------------------- requests

def tool_specs(api, body):
    """{name: json-schema of the parameters} of the tools a request offers."""
    out = {}
    if api == "gemini":
        for t in body.get("tools") or []:
            for f in t.get("functionDeclarations") or t.get("function_declarations") or []:
                out[f.get("name")] = f.get("parameters") or f.get("parametersJsonSchema") or {}
        return out
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if api == "chat" and "function" in t:
            f = t["function"]
            out[f.get("name")] = f.get("parameters") or {}
        elif t.get("type") == "local_shell":
            out["local_shell"] = {}
        elif "name" in t:
            out[t["name"]] = t.get("input_schema") or t.get("parameters") or {}
    return out


def has_tool_result(api, body):
    if api == "anthropic":
        for m in body.get("messages") or []:
            c = m.get("content")
            if isinstance(c, list) and any(isinstance(b, dict) and b.get("type") == "tool_result"
                                           for b in c):
                return True
    elif api == "responses":
        for it in body.get("input") or []:
            if isinstance(it, dict) and it.get("type", "").endswith("call_output"):
                return True
    elif api == "chat":
        return any(m.get("role") == "tool" for m in body.get("messages") or [])
    elif api == "gemini":
        for c in body.get("contents") or []:
            for p in c.get("parts") or []:
                if "functionResponse" in p or "function_response" in p:
                    return True
    return False


def _text(v):
    if isinstance(v, str):
        return v
    return json.dumps(v)


def tool_results(api, body):
    """The texts of the tool results a request carries (what the tools returned)."""
    out = []
    if api == "anthropic":
        for m in body.get("messages") or []:
            c = m.get("content")
            for b in c if isinstance(c, list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    out.append(_text(b.get("content")))
    elif api == "responses":
        for it in body.get("input") or []:
            if isinstance(it, dict) and it.get("type", "").endswith("call_output"):
                out.append(_text(it.get("output")))
    elif api == "chat":
        for m in body.get("messages") or []:
            if m.get("role") == "tool":
                out.append(_text(m.get("content")))
    elif api == "gemini":
        for c in body.get("contents") or []:
            for p in c.get("parts") or []:
                fr = p.get("functionResponse") or p.get("function_response")
                if fr:
                    out.append(_text(fr.get("response")))
    return out


def wants_json(api, body):
    if api == "gemini":
        gc = body.get("generationConfig") or {}
        return gc.get("responseMimeType") == "application/json"
    if api == "chat":
        rf = body.get("response_format") or {}
        return rf.get("type") in ("json_object", "json_schema")
    return False


def args_for(schema, known):
    """Arguments for a tool: KNOWN {property: value} matched against the schema,
    and a filler for every other required string property."""
    props = (schema or {}).get("properties") or {}
    args = {}
    for k, v in known.items():
        if k in props:
            p = props[k]
            if p.get("type") == "array" and isinstance(v, str):
                v = ["bash", "-lc", v]
            args[k] = v
    for r in (schema or {}).get("required") or []:
        if r not in args:
            t = (props.get(r) or {}).get("type")
            args[r] = "run the requested command" if t in (None, "string") else None
            if args[r] is None:
                del args[r]
    return args


def decide(cfg, api, body):
    """('tool', name, args) or ('text', text)."""
    tools = tool_specs(api, body)
    if has_tool_result(api, body):
        return ("text", FINAL)
    names = SHELL_TOOLS if cfg.scenario == "shell" else READ_TOOLS
    for n in names:
        if n in tools:
            if cfg.scenario == "shell":
                known = {"command": cfg.command, "cmd": cfg.command,
                         "description": "Run the requested commands"}
            else:
                known = {k: cfg.read_path for k in PATH_KEYS}
            if n == "read_many_files":
                known = {"paths": [cfg.read_path], "include": [cfg.read_path]}
            return ("tool", n, args_for(tools[n], known))
    if wants_json(api, body):
        return ("text", json.dumps({"next_speaker": "user", "reasoning": "The model is done.",
                                    "model_choice": "flash", "complexity_score": 1}))
    return ("text", "ok")


# ---------------------------------------------------------------- replies

def sse(events):
    out = []
    for name, data in events:
        if name:
            out.append("event: %s\n" % name)
        out.append("data: %s\n\n" % (data if isinstance(data, str) else json.dumps(data)))
    return "".join(out).encode()


def anthropic_reply(answer, body, n):
    model = body.get("model", "fake-model")
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    if answer[0] == "tool":
        block = {"type": "tool_use", "id": "toolu_fake%04d" % n, "name": answer[1],
                 "input": answer[2]}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": answer[1]}
        stop = "end_turn"
    msg = {"id": "msg_fake%04d" % n, "type": "message", "role": "assistant", "model": model,
           "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        return "application/json", json.dumps(msg).encode()
    start = dict(msg, content=[], stop_reason=None)
    if block["type"] == "tool_use":
        cstart = dict(block, input={})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        cstart = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    return "text/event-stream", sse([
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": cstart}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def responses_reply(answer, body, n):
    rid = "resp_fake%04d" % n
    if answer[0] == "tool":
        if answer[1] == "local_shell":
            item = {"type": "local_shell_call", "id": "lsh_%04d" % n, "call_id": "call_%04d" % n,
                    "status": "completed",
                    "action": {"type": "exec", "command": answer[2].get("command") or []}}
        else:
            item = {"type": "function_call", "id": "fc_%04d" % n, "call_id": "call_%04d" % n,
                    "name": answer[1], "arguments": json.dumps(answer[2]), "status": "completed"}
    else:
        item = {"type": "message", "id": "msg_%04d" % n, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": answer[1], "annotations": []}]}
    resp = {"id": rid, "object": "response", "created_at": int(time.time()), "status": "completed",
            "model": body.get("model", "fake-model"), "output": [item],
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 15}}
    if not body.get("stream"):
        return "application/json", json.dumps(resp).encode()
    created = dict(resp, status="in_progress", output=[], usage=None)
    return "text/event-stream", sse([
        ("response.created", {"type": "response.created", "response": created}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                        "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                       "item": item}),
        ("response.completed", {"type": "response.completed", "response": resp}),
    ])


def chat_reply(answer, body, n):
    base = {"id": "chatcmpl-fake%04d" % n, "created": int(time.time()),
            "model": body.get("model", "fake-model")}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if answer[0] == "tool":
        call = {"id": "call_fake%04d" % n, "type": "function",
                "function": {"name": answer[1], "arguments": json.dumps(answer[2])}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": answer[1]}
        finish = "stop"
    if not body.get("stream"):
        return "application/json", json.dumps(dict(base, object="chat.completion", usage=usage,
            choices=[{"index": 0, "message": message, "finish_reason": finish}])).encode()
    chunk = dict(base, object="chat.completion.chunk")
    if answer[0] == "tool":
        delta = {"role": "assistant", "tool_calls": [dict(call, index=0)]}
    else:
        delta = {"role": "assistant", "content": answer[1]}
    return "text/event-stream", sse([
        (None, dict(chunk, choices=[{"index": 0, "delta": delta, "finish_reason": None}])),
        (None, dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": finish}],
                    usage=usage)),
        (None, "[DONE]"),
    ])


def gemini_reply(answer, body, n, stream):
    if answer[0] == "tool":
        part = {"functionCall": {"name": answer[1], "args": answer[2], "id": "fc-%04d" % n}}
    else:
        part = {"text": answer[1]}
    resp = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": "fake-model", "responseId": "fake%04d" % n}
    if not stream:
        return "application/json", json.dumps(resp).encode()
    return "text/event-stream", sse([(None, resp)])


# ---------------------------------------------------------------- server

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    cfg = None  # set by serve()

    def log_message(self, *a):
        pass

    def _record(self, entry):
        with self.cfg.lock:
            with open(self.cfg.record, "a") as f:
                f.write(json.dumps(entry) + "\n")

    def _send(self, code, ctype, data):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        if ctype == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?")[0]
        self._record({"method": "GET", "path": self.path})
        if path.endswith("/models"):
            self._send(200, "application/json", json.dumps({"object": "list", "data": [
                {"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}],
                "models": []}).encode())
        else:
            self._send(404, "application/json", b'{"error":{"message":"not found"}}')

    def do_HEAD(self):
        self._send(200, "text/plain", b"")

    def do_POST(self):
        n_len = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n_len) if n_len else b""
        if self.headers.get("Content-Encoding") in ("gzip", "zstd", "br"):
            if self.headers.get("Content-Encoding") == "gzip":
                import gzip
                raw = gzip.decompress(raw)
        text = raw.decode("utf-8", "replace")
        try:
            body = json.loads(text) if text else {}
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            api = "anthropic-count"
        elif path.endswith("/messages"):
            api = "anthropic"
        elif path.endswith("/responses"):
            api = "responses"
        elif path.endswith("/chat/completions"):
            api = "chat"
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            api = "gemini"
        elif ":countTokens" in path:
            api = "gemini-count"
        else:
            api = "other"
        with self.cfg.lock:
            self.cfg.calls += 1
            n = self.cfg.calls
        answer = decide(self.cfg, api, body) if api in ("anthropic", "responses", "chat",
                                                         "gemini") else None
        self._record({"method": "POST", "path": self.path, "api": api, "body": text,
                      "tools": sorted(t for t in tool_specs(api, body) if t) if body else [],
                      "answer": answer})
        if api == "anthropic":
            ctype, data = anthropic_reply(answer, body, n)
        elif api == "responses":
            ctype, data = responses_reply(answer, body, n)
        elif api == "chat":
            ctype, data = chat_reply(answer, body, n)
        elif api == "gemini":
            ctype, data = gemini_reply(answer, body, n, ":streamGenerateContent" in path)
        elif api == "anthropic-count":
            ctype, data = "application/json", b'{"input_tokens": 10}'
        elif api == "gemini-count":
            ctype, data = "application/json", b'{"totalTokens": 10}'
        else:
            self._send(404, "application/json", b'{"error":{"message":"not found"}}')
            return
        self._send(200, ctype, data)


def serve(cfg):
    """Start the server on a free port of 127.0.0.1 in a daemon thread; return it."""
    handler = type("H", (Handler,), {"cfg": cfg})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", required=True)
    ap.add_argument("--scenario", default="shell", choices=["shell", "read"])
    ap.add_argument("--command", default="true")
    ap.add_argument("--read-path", default="/dev/null")
    a = ap.parse_args()
    srv = serve(Config(a.record, a.scenario, a.command, a.read_path))
    print("PORT", srv.server_address[1], flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
