"""Collecting zero-shot LLM answers with the paper's answering prompt (Sec. 7.4, App. C.2 "LLM-generated answers").

The paper prompts GPT-4o, Gemini 2.0 Flash and Qwen3-8B-Instruct zero-shot, temperature 0.0, 256-token output cap,
with one fixed system prompt; the question is the only field that varies per call. Any model can be added through a
client with a ``complete(system, user, *, temperature, max_tokens) -> str`` method: an OpenAI-compatible HTTP
endpoint (vLLM, llama.cpp server, Ollama, OpenAI itself) or a local ``transformers`` chat model.

Example:
    >>> class Echo:
    ...     def complete(self, system, user, *, temperature, max_tokens):
    ...         return "Paris."
    >>> collect_answers(["What is the capital of France?"], Echo(), model="echo", progress=False)["answer"].tolist()
    ['Paris.']
"""

from __future__ import annotations

import datetime as _dt
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Protocol, Sequence

import pandas as pd
from tqdm import tqdm

#: The system prompt of App. C.2, verbatim (the paper's typeset quotes rendered as typographic double quotes).
ANSWER_PROMPT = (
    "Answer the question in the style of a person responding on an exam: concise, factually correct, and free of "
    "elaboration. Use a single short sentence when sufficient; never exceed three sentences. Do not restate the "
    "question, include preamble or qualifications, or open with phrases such as \u201cthe answer is\u2026\u201d. "
    "Respond in plain prose without any markdown formatting: no bold, italics, headers, lists, or code blocks."
)

#: Decoding settings of App. C.2: zero-shot, temperature 0.0, 256-token output cap.
TEMPERATURE = 0.0
MAX_TOKENS = 256


class ChatClient(Protocol):
    """Anything that answers one (system, user) exchange."""

    def complete(self, system: str, user: str, *, temperature: float, max_tokens: int) -> str: ...


@dataclass(frozen=True)
class OpenAICompatibleClient:
    """A chat-completions client for any OpenAI-compatible server (``POST {base_url}/chat/completions``).

    Example:
        >>> client = OpenAICompatibleClient("http://127.0.0.1:8000/v1", model="Qwen/Qwen3-8B")  # doctest: +SKIP
    """

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 120.0

    def complete(self, system: str, user: str, *, temperature: float, max_tokens: int) -> str:
        payload = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(payload).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body = json.loads(response.read().decode("utf-8"))
        except (urllib.error.URLError, TimeoutError) as err:
            raise ConnectionError(f"could not reach the chat endpoint {self.base_url!r}: {err}") from err
        try:
            return body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as err:
            raise ValueError(f"unexpected chat-completions response from {self.base_url!r}: {body!r}") from err


class TransformersChatClient:
    """A local ``transformers`` chat model, greedy decoding (temperature 0.0 means no sampling).

    The model is found by :func:`caplib.checkpoints.resolve_checkpoint` like every other model in caplib: a local
    directory, or a Hub id with a pinned ``revision`` already in the local Hugging Face cache (``python -m
    caplib.checkpoints fetch MODEL --revision REV`` puts it there); it never downloads. ``allow_unpinned`` takes
    the cached ``main``. ``self.checkpoint`` records what was loaded.

    Example:
        >>> client = TransformersChatClient("Qwen/Qwen3-8B", revision="<40-hex commit>")  # doctest: +SKIP
    """

    def __init__(self, model: str, revision: str | None = None, device: str | None = None, *,
                 allow_unpinned: bool = False) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from caplib.checkpoints import pick_device, resolve_checkpoint

        self.checkpoint = resolve_checkpoint(model, revision, allow_unpinned=allow_unpinned)
        self.tokenizer = AutoTokenizer.from_pretrained(self.checkpoint.path, local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(self.checkpoint.path, local_files_only=True)
        if device:
            self.model.to(pick_device(device))
        self.model.eval()

    def complete(self, system: str, user: str, *, temperature: float, max_tokens: int) -> str:
        import torch

        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        inputs = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt"
        ).to(self.model.device)
        with torch.inference_mode():
            output = self.model.generate(
                inputs,
                max_new_tokens=max_tokens,
                do_sample=temperature > 0,
                **({"temperature": temperature} if temperature > 0 else {}),
            )
        return self.tokenizer.decode(output[0, inputs.shape[1]:], skip_special_tokens=True).strip()


def collect_answers(
    questions: Sequence[str],
    client: ChatClient,
    *,
    model: str,
    temperature: float = TEMPERATURE,
    max_tokens: int = MAX_TOKENS,
    progress: bool = True,
) -> pd.DataFrame:
    """Ask ``client`` every question with the App. C.2 prompt; answers are recorded exactly as returned.

    Returns one row per question with ``question, answer, model, prompt, temperature, max_tokens, date``
    (ISO date of collection). Nothing is edited after generation: label the answers in a separate, blind pass.

    Example:
        >>> class Fixed:
        ...     def complete(self, system, user, *, temperature, max_tokens):
        ...         return "42"
        >>> collect_answers(["6 x 7?"], Fixed(), model="fixed", progress=False).loc[0, "temperature"]
        0.0
    """
    if not questions:
        raise ValueError("collect_answers needs at least one question")
    today = _dt.date.today().isoformat()
    rows = []
    for question in tqdm(questions, desc=f"answers from {model}", disable=not progress):
        answer = client.complete(ANSWER_PROMPT, question, temperature=temperature, max_tokens=max_tokens)
        rows.append(
            {
                "question": question,
                "answer": answer,
                "model": model,
                "prompt": ANSWER_PROMPT,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "date": today,
            }
        )
    return pd.DataFrame(rows)
