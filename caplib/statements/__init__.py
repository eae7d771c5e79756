"""QA -> declarative statement reformulation (Sec. 4 "Statement Generation", Sec. 5, App. B.5, App. C.2).

CAP compares statements, not raw answers: ``s(q, g)`` and ``s(q, p)`` are declarative sentences that
express the proposition of a question-answer pair. Two generators share one interface,
``.generate(questions, answers) -> list[str]``:

* :class:`Seq2SeqStatementGenerator` runs any Hugging Face seq2seq checkpoint on
  :func:`format_input` (the paper: mT5-small fine-tuned on CAP-Statements; beam search width 4,
  at most 512 output tokens, App. C.2). Outputs are batched, deduplicated and cached on disk.
* :class:`TemplateStatementGenerator` is a deterministic rule-based reformulator (no model) for the
  offline profile and as a baseline; it reports which rule produced each statement.

:func:`finetune` is the App. C.2 recipe (AdamW, lr 5e-5, batch 4 x accumulation 2, up to 15 epochs,
early stopping on validation ROUGE-L), :func:`evaluate_statements` the Sec. 4 / Tab. 15 evaluation
(BLEU, ROUGE-L, Exact Match, overall and per question type). Command line::

    python -m caplib.statements train --data data/sample/cap_statements.csv --base google/mt5-small \\
        --revision <commit> --out models/statements
    python -m caplib.statements evaluate --model models/statements --data data/sample/cap_statements.csv

Example:
    >>> TemplateStatementGenerator().generate(["What gas do plants release during photosynthesis?"], ["Oxygen"])
    ['Plants release oxygen during photosynthesis.']
    >>> format_input("Who wrote Hamlet?", "Shakespeare")
    'question: Who wrote Hamlet? answer: Shakespeare'
"""

from caplib.statements.cli import main
from caplib.statements.evaluation import evaluate_statements
from caplib.statements.inputs import INPUT_TEMPLATE, format_input
from caplib.statements.seq2seq import MANIFEST_NAME, Seq2SeqStatementGenerator
from caplib.statements.template import RULES, TemplateStatementGenerator, reformulate
from caplib.statements.training import finetune

__all__ = [
    "INPUT_TEMPLATE",
    "MANIFEST_NAME",
    "RULES",
    "Seq2SeqStatementGenerator",
    "TemplateStatementGenerator",
    "evaluate_statements",
    "finetune",
    "format_input",
    "main",
    "reformulate",
]
