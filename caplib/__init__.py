"""caplib: CAP (Context-Aware Precision) and the semantic-correctness monotonicity protocol.

Reference implementation of "How Correct Is Your Answer? A Semantic Correctness Framework for Open QA
Evaluation" (EMNLP 2026 Findings). Modules follow the paper's concepts: ``taxonomy`` (Sec. 3), ``data``
(Sec. 5, App. B), ``nli`` and ``statements`` (Sec. 4, App. C.2), ``cap`` (Eq. 2-3), ``baselines`` (Sec. 6),
``evaluation`` (Sec. 6.2, App. C.1), ``paper`` (the paper's reported tables as data).

Example:
    >>> from caplib.cap import cap
    >>> import numpy as np
    >>> float(cap(np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))[0])  # 0.85*1 + 0.15*0.3
    0.895
"""

__version__ = "0.1.0"
