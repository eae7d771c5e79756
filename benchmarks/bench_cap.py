"""Throughput of CAPScorer against a naive one-pair-at-a-time transformers pipeline (not a test).

Both score the same (gold statement, candidate statement) rows with the same model in the same run:

* naive: ``transformers.pipeline("text-classification", top_k=None)`` called once per NLI pass on
  ``{"text": premise, "text_pair": hypothesis}``, in input order: forward (gold -> candidate) then
  backward for every row, 2 calls per row; CAP from those probabilities with ``caplib.cap.cap``.
* CAPScorer: ``CAPScorer.score(golds, candidates)``, both directions in one NLI call, identical pairs
  scored once, length-sorted batches (``--batch-size``, paper 16), on CPU several batches at a time
  (``--cpu-workers``, default one per torch thread). Cache disabled.

Model and tokenizer load before the clocks start; each side gets a short warm-up; the two are timed
in ``--repeat`` rounds of alternating order. The speedup reported is the median over rounds of the
ratio of the two times measured back to back (robust to a shared machine whose load changes between
rounds); the best time of each side gives the pairs/second. The two must agree
(CAP and all six probabilities within 1e-5 in float32; float16/bfloat16 autocast changes rounding with
batch padding, so there the tolerance is 5e-3); the script exits with status 1 when they do not.

Inputs mimic CAP-Correctness: every gold statement appears with 8 candidate statements (one an exact
copy of the gold, as for the ``exact`` class, one repeated verbatim from another candidate, the rest
edits, extensions or truncations of it); statement lengths are log-normal (median 10 words) and
every tenth gold is a long, multi-sentence item. Seeded. ``--data`` takes the (premise, hypothesis)
statements of a CAP-Correctness file instead, e.g. the bundled sample (1,024 rows).

Default model: a DeBERTa-v2 classifier shaped like deberta-v3 (relative attention) with 4 layers,
hidden size 256, 4 heads, built locally with RANDOM weights (``tests/tiny_models.py``): its
probabilities mean nothing, its cost per token is real. Its BPE tokenizer has 300 pieces for the
synthetic mix (whose words come from the tokenizer's corpus) and 3,000 trained on the statements
themselves with ``--data`` (~1.2-1.4 tokens per word, as deberta-v3's or MiniLM's tokenizers on
English statements). ``--model`` takes any NLI checkpoint instead.

Usage:
    python benchmarks/bench_cap.py                                   # CPU, locally built model
    python benchmarks/bench_cap.py --threads 1 --json bench.json
    python benchmarks/bench_cap.py --model ~/.cache/caplib/models/offline-nli-v3 \
        --data data/sample/cap_correctness.csv                     # offline backbone, real statements
    python benchmarks/bench_cap.py --model cross-encoder/nli-deberta-v3-large --revision main \\
        --device cuda --pairs 4096                                   # GPU run of the paper's model
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from caplib.runtime import Runtime  # noqa: E402
from caplib.cap import COMPONENT_COLUMNS, CAPScorer, cap  # noqa: E402
from caplib.nli import LABEL_ORDER  # noqa: E402
from tests.tiny_models import corpus  # noqa: E402

CANDIDATES_PER_GOLD = 8  # CAP-Correctness: each gold statement with 8 candidate answers


def make_rows(n_rows: int, seed: int) -> tuple[list[str], list[str]]:
    """(gold statements, candidate statements), ``CANDIDATES_PER_GOLD`` candidates per gold."""
    rng = np.random.default_rng(seed)
    words = sorted({w.strip(".").lower() for sentence in corpus() for w in sentence.split()})

    def sentence(n_words: int) -> str:
        text = " ".join(rng.choice(words, n_words))
        return text[0].upper() + text[1:] + "."

    def statement(long: bool) -> str:
        if long:  # long-question items: several sentences of context in one statement
            return " ".join(sentence(int(rng.integers(12, 30))) for _ in range(int(rng.integers(2, 5))))
        return sentence(int(np.clip(rng.lognormal(np.log(10), 0.45), 3, 40)))

    golds, candidates = [], []
    for index in range(n_rows // CANDIDATES_PER_GOLD):
        gold = statement(long=index % 10 == 9)  # every tenth gold is long
        tokens = gold[:-1].split()
        variants = [gold]  # exact copy
        while len(variants) < CANDIDATES_PER_GOLD - 1:  # distinct variants
            kind = rng.integers(3)
            if kind == 0:  # edit: replace a few words
                edited = list(tokens)
                for position in rng.integers(0, len(edited), max(1, len(edited) // 5)):
                    edited[position] = str(rng.choice(words))
                variant = " ".join(edited) + "."
            elif kind == 1:  # extension: extra (valid or invalid) content
                variant = gold[:-1] + ", and " + sentence(int(rng.integers(4, 16))).lower()
            else:  # truncation: partial content
                variant = " ".join(tokens[: int(rng.integers(1, len(tokens)))]) + "."
            if variant not in variants:
                variants.append(variant)
        variants.append(variants[int(rng.integers(1, len(variants)))])  # two answers with the same statement
        golds += [gold] * CANDIDATES_PER_GOLD
        candidates += variants
    return golds, candidates


def naive_probabilities(pipe, premises: list[str], hypotheses: list[str], autocast) -> np.ndarray:
    """One pipeline call per (premise, hypothesis), columns in LABEL_ORDER by label name."""
    rows = []
    with autocast:
        for premise, hypothesis in zip(premises, hypotheses):
            output = pipe({"text": premise, "text_pair": hypothesis}, truncation=True, max_length=512)
            by_label = {entry["label"].lower(): entry["score"] for entry in output}
            rows.append([by_label[label] for label in LABEL_ORDER])
    return np.array(rows, dtype=np.float64)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="NLI checkpoint (default: build a random DeBERTa-v2 locally)")
    parser.add_argument("--revision", default=None, help="Hub revision of --model")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="auto", help="CAPScorer dtype; the naive run uses the same autocast")
    parser.add_argument("--pairs", type=int, default=None,
                        help="gold-candidate pairs (synthetic: multiple of 8, default 512; --data: first N rows, "
                             "default all)")
    parser.add_argument("--data", default=None, help="CAP-Correctness CSV whose premise/hypothesis statements to use")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--cpu-workers", type=int, default=None, help="CAPScorer batches at a time on CPU")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3, help="timing rounds, alternating order; best is kept")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    parser.add_argument("--onnx", action="store_true",
                        help="also time CAPScorer with nli_backend 'onnxruntime' and 'onnxruntime-int8' in the same "
                             "rounds, and their fidelity to the torch path (with --data: pairwise accuracy and "
                             "violations)")
    args = parser.parse_args(argv)

    import torch
    import transformers
    from transformers import pipeline

    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    workdir = tempfile.TemporaryDirectory()
    if args.data is None:
        golds, candidates = make_rows(args.pairs or 512, args.seed)
        inputs = f"synthetic CAP-Correctness-like statements (seed {args.seed})"
    else:
        from caplib.data import load_correctness

        rows = load_correctness(args.data).iloc[: args.pairs]
        golds, candidates = rows["premise"].tolist(), rows["hypothesis"].tolist()
        inputs = f"premise/hypothesis of the first {len(rows)} rows of {args.data}"
    if args.model is None:
        from tests.tiny_models import build_nli_checkpoint

        # The synthetic mix draws its words from the tokenizer's own corpus; real statements need a vocabulary
        # trained on them too, or rare words fall apart into letters (132 instead of 47 tokens per pair).
        vocab_size, texts = (300, ()) if args.data is None else (3000, sorted({*golds, *candidates}))
        model = str(build_nli_checkpoint(Path(workdir.name) / "model", num_layers=args.layers,
                                         hidden_size=args.hidden, num_heads=max(1, args.hidden // 64),
                                         intermediate_size=4 * args.hidden, vocab_size=vocab_size, texts=texts,
                                         seed=args.seed))
        model_note = (f"DeBERTa-v2 (relative attention), {args.layers} layers, hidden {args.hidden}, built locally "
                      f"with random weights, BPE vocabulary of {vocab_size}")
    else:
        model, model_note = args.model, args.model

    runtime = Runtime(device=args.device, dtype=args.dtype, cache=False, progress=False,
                      cpu_workers=args.cpu_workers, allow_unpinned=args.revision is None)
    scorer = CAPScorer(nli_model=model, revision=args.revision, batch_size=args.batch_size, runtime=runtime)
    scorer.nli.load()
    pipe = pipeline("text-classification", model=scorer.nli._model, tokenizer=scorer.nli._tokenizer, top_k=None,
                    device=torch.device(scorer.nli.device))
    autocast = scorer.nli._autocast()
    tokenizer = scorer.nli._tokenizer
    lengths = np.array([len(ids) for ids in tokenizer(golds, candidates, verbose=False)["input_ids"]])

    # warm-up (first-call allocations, kernel selection)
    scorer.score(golds[:8], candidates[:8])
    naive_probabilities(pipe, golds[:8], candidates[:8], autocast)

    def run_naive():
        forward = naive_probabilities(pipe, golds, candidates, autocast)
        backward = naive_probabilities(pipe, candidates, golds, autocast)
        return forward, backward, cap(forward, backward, scorer.alpha, scorer.lam)

    def run_caplib():
        return scorer.components(golds, candidates)

    runners = {"naive": run_naive, "caplib": run_caplib}
    for backend in ("onnxruntime", "onnxruntime-int8") if args.onnx else ():
        onnx_scorer = CAPScorer(nli_model=model, revision=args.revision, batch_size=args.batch_size,
                                runtime=runtime.replace(nli_backend=backend, cache_dir=workdir.name))
        onnx_scorer.nli.load()  # exported (and quantized) once, into the temporary directory, outside the clock
        onnx_scorer.score(golds[:8], candidates[:8])
        runners[backend] = functools.partial(onnx_scorer.components, golds, candidates)

    # Alternate the order over rounds so that a change of machine load hits both sides alike; keep the best.
    times: dict[str, list[float]] = {name: [] for name in runners}
    outputs: dict[str, Any] = {}
    for round_ in range(args.repeat):
        for name in (list(runners) if round_ % 2 == 0 else list(runners)[::-1]):
            start = time.perf_counter()
            outputs[name] = runners[name]()
            times[name].append(time.perf_counter() - start)
    (forward, backward, naive_cap), components = outputs["naive"], outputs["caplib"]
    naive_seconds, fast_seconds = min(times["naive"]), min(times["caplib"])
    ratios = [naive / fast for naive, fast in zip(times["naive"], times["caplib"])]
    stats = dict(scorer.nli.last_stats)

    naive = np.column_stack([naive_cap, forward[:, 0] + scorer.lam * forward[:, 1],
                             backward[:, 0] + scorer.lam * backward[:, 1], forward, backward])
    max_diff = float(np.abs(components[list(COMPONENT_COLUMNS)].to_numpy() - naive).max())
    tolerance = 1e-5 if scorer.nli.dtype == "float32" else 5e-3
    result = {
        "model": model_note,
        "inputs": inputs,
        "signature": str(scorer.signature()),
        "device": scorer.nli.device,
        "dtype": scorer.nli.dtype,
        "torch_threads": torch.get_num_threads(),
        "batch_size": args.batch_size,
        "cpu_workers": stats["cpu_workers"],
        "pairs": len(golds),  # gold-candidate pairs, 2 NLI passes each
        "nli_passes": 2 * len(golds),
        "unique_nli_pairs": stats["unique"],
        "tokens_per_pair": {"mean": float(lengths.mean()), "median": float(np.median(lengths)),
                            "max": int(lengths.max())},
        "rounds": args.repeat,
        "naive_seconds": naive_seconds,
        "caplib_seconds": fast_seconds,
        "all_seconds": times,
        "naive_pairs_per_second": len(golds) / naive_seconds,
        "caplib_pairs_per_second": len(golds) / fast_seconds,
        "speedup": float(np.median(ratios)),
        "speedup_per_round": ratios,
        "max_abs_difference": max_diff,
        "tolerance": tolerance,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cpu": platform.processor() or platform.machine(),
    }
    print(f"model: {model_note}\ninputs: {inputs}")
    print(f"{len(golds)} gold-candidate pairs ({2 * len(golds)} NLI passes, {stats['unique']} unique), tokens per "
          f"NLI pair mean {lengths.mean():.1f} / max {lengths.max()}, device {scorer.nli.device}, dtype "
          f"{scorer.nli.dtype}, {torch.get_num_threads()} torch thread(s), batch size {args.batch_size}, "
          f"{stats['cpu_workers']} CAPScorer batch(es) at a time")
    print(f"naive pipeline : {result['naive_pairs_per_second']:8.1f} pairs/s ({naive_seconds:.2f} s)")
    print(f"CAPScorer      : {result['caplib_pairs_per_second']:8.1f} pairs/s ({fast_seconds:.2f} s)")
    print(f"speedup        : {result['speedup']:.2f}x (median of {args.repeat} back-to-back rounds: "
          f"{', '.join(f'{ratio:.2f}' for ratio in ratios)}); max |difference| of CAP and its components: "
          f"{max_diff:.2e} (tolerance {tolerance:g})")
    for backend in ("onnxruntime", "onnxruntime-int8") if args.onnx else ():
        result[backend] = onnx_report(backend, outputs, times, rows if args.data else None)
        print(f"{backend:<17}: {len(golds) / min(times[backend]):8.1f} pairs/s ({min(times[backend]):.2f} s): "
              f"{json.dumps(result[backend])}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    workdir.cleanup()
    return 0 if max_diff <= tolerance else 1


def onnx_report(backend: str, outputs: dict[str, Any], times: dict[str, list[float]], rows: Any) -> dict[str, Any]:
    """An ONNX Runtime backend against the torch path and the naive pipeline (median per-round ratios), and its
    fidelity: max |difference| of CAP, and with labelled rows the change in pairwise accuracy and violations."""
    from caplib.evaluation import class_means, monotonicity_violations, pairwise_accuracy

    exact, fast = outputs["caplib"]["cap"].to_numpy(), outputs[backend]["cap"].to_numpy()
    report: dict[str, Any] = {
        "seconds": min(times[backend]),
        "speedup_vs_torch": float(np.median([t / o for t, o in zip(times["caplib"], times[backend])])),
        "speedup_vs_naive": float(np.median([n / o for n, o in zip(times["naive"], times[backend])])),
        "max_abs_difference_cap": float(np.abs(fast - exact).max()),
        "mean_abs_difference_cap": float(np.abs(fast - exact).mean()),
    }
    if rows is not None:
        labels = rows["label_semantic"].tolist()
        for name, values in (("torch", exact), (backend, fast)):
            report[f"pairwise_accuracy_{name}"] = pairwise_accuracy(values, labels)
            report[f"violations_{name}"] = len(monotonicity_violations(class_means(values, labels)))
        report["pairwise_accuracy_change"] = report[f"pairwise_accuracy_{backend}"] - report["pairwise_accuracy_torch"]
    return report


if __name__ == "__main__":
    raise SystemExit(main())
