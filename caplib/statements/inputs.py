"""The one input format of the statement generators: ``question: {q} answer: {a}`` (App. C.2), used identically
in training and inference, and the check every generator applies to its (question, answer) pairs."""

from __future__ import annotations

from collections.abc import Sequence

#: The seq2seq input, identical in training and inference.
INPUT_TEMPLATE = "question: {question} answer: {answer}"


def format_input(question: str, answer: str) -> str:
    """The seq2seq model's input for one question-answer pair (``INPUT_TEMPLATE``, whitespace collapsed).

    Example:
        >>> format_input("  What is the capital of France? ", "Paris\\n")
        'question: What is the capital of France? answer: Paris'
    """
    return INPUT_TEMPLATE.format(question=" ".join(question.split()), answer=" ".join(answer.split()))


def check_pairs(questions: Sequence[str], answers: Sequence[str]) -> tuple[list[str], list[str]]:
    """Validated lists of (question, answer) pairs: equal lengths, non-empty strings."""
    questions, answers = list(questions), list(answers)
    if len(questions) != len(answers):
        raise ValueError(f"got {len(questions)} questions but {len(answers)} answers; they must pair up")
    for name, texts in (("question", questions), ("answer", answers)):
        for index, text in enumerate(texts):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{name} {index} is {text!r}; every {name} must be a non-empty string")
    return questions, answers
