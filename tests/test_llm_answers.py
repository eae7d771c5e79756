"""The answer-collection code of Sec. 7.4 / App. C.2, tested with a fake client and a loopback HTTP server."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from caplib.llm_answers import ANSWER_PROMPT, MAX_TOKENS, TEMPERATURE, OpenAICompatibleClient, collect_answers


class RecordingClient:
    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = []

    def complete(self, system, user, *, temperature, max_tokens):
        self.calls.append((system, user, temperature, max_tokens))
        return self.replies.pop(0)


def test_prompt_is_the_papers_and_settings_are_zero_shot_greedy():
    assert ANSWER_PROMPT.startswith("Answer the question in the style of a person responding on an exam:")
    assert ANSWER_PROMPT.endswith("no bold, italics, headers, lists, or code blocks.")
    assert "never exceed three sentences" in ANSWER_PROMPT
    assert (TEMPERATURE, MAX_TOKENS) == (0.0, 256)


def test_collect_answers_sends_only_the_question_and_keeps_answers_verbatim():
    client = RecordingClient(["  Mitochondria. ", "Oxygen"])
    frame = collect_answers(["Q1?", "Q2?"], client, model="fake-1", progress=False)
    assert [call[1] for call in client.calls] == ["Q1?", "Q2?"]
    assert all(call[0] == ANSWER_PROMPT and call[2] == 0.0 and call[3] == 256 for call in client.calls)
    assert frame["answer"].tolist() == ["  Mitochondria. ", "Oxygen"]  # not stripped, not edited
    assert set(frame["model"]) == {"fake-1"}
    assert list(frame.columns) == ["question", "answer", "model", "prompt", "temperature", "max_tokens", "date"]


def test_collect_answers_rejects_empty_input():
    with pytest.raises(ValueError):
        collect_answers([], RecordingClient([]), model="x", progress=False)


def test_openai_compatible_client_against_a_loopback_server():
    received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server API)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append((self.path, self.headers.get("Authorization"), body))
            reply = {"choices": [{"message": {"role": "assistant", "content": "Sofia."}}]}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.handle_request, daemon=True)  # exactly one request
    thread.start()
    client = OpenAICompatibleClient(f"http://127.0.0.1:{server.server_port}/v1", model="m", api_key="k", timeout=10)
    frame = collect_answers(["Name a city in Bulgaria."], client, model="m", progress=False)
    thread.join(timeout=10)
    server.server_close()
    assert frame.loc[0, "answer"] == "Sofia."
    path, auth, body = received[0]
    assert path == "/v1/chat/completions" and auth == "Bearer k"
    assert body["messages"] == [
        {"role": "system", "content": ANSWER_PROMPT},
        {"role": "user", "content": "Name a city in Bulgaria."},
    ]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 256


def test_unreachable_endpoint_is_a_clear_error():
    client = OpenAICompatibleClient("http://127.0.0.1:9/v1", model="m", timeout=2)
    with pytest.raises(ConnectionError, match="could not reach"):
        client.complete("s", "u", temperature=0.0, max_tokens=1)


def test_local_chat_model_is_found_like_every_model_and_never_downloaded(tmp_path, monkeypatch):
    """TransformersChatClient goes through caplib.checkpoints: an unpinned Hub id is refused, a pinned one that is
    not in the local cache is reported (with the fetch command), nothing is downloaded."""
    from caplib.checkpoints import CheckpointNotAvailable
    from caplib.llm_answers import TransformersChatClient

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty Hugging Face cache
    with pytest.raises(ValueError, match="revision"):
        TransformersChatClient("Qwen/Qwen3-8B")
    with pytest.raises(CheckpointNotAvailable, match="fetch"):
        TransformersChatClient("Qwen/Qwen3-8B", revision="0" * 40)
    assert not (tmp_path / "hf").exists() or not any((tmp_path / "hf").rglob("*.safetensors"))
