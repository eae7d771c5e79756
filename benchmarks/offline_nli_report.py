"""Acceptance report of the offline NLI backbone (caplib.offline_nli): every figure, as markdown and JSON.

1. The backbone's own quality, from its manifest: held-out 3-way accuracy on pairs derived from source
   items never seen in training, and SuperGLUE CB validation accuracy, each beside the majority class.
2. Offline CAP (alpha/lam of the offline profile = the paper's 0.85/0.30) against the offline baselines
   (BLEU, ROUGE-L, METEOR, BERTScore with all-MiniLM-L6-v2, EM, ACC) on the *test* split of the bundled
   CAP-Correctness sample: Spearman, Kendall, pairwise accuracy, monotonicity violations, hard pairs.
   CAP is scored on the sample's own statements (premise/hypothesis, as ``caplib score`` and the paper
   do) and, as a second row, on statements made by the offline template generator.
3. The alpha/lam sweep of Tab. 12 on the sample's *validation* split, beside the paper's table.

Nothing here trains or tunes on the test split. Usage::

    python benchmarks/offline_nli_report.py                      # the cached backbone (trains it if missing)
    python benchmarks/offline_nli_report.py --model DIR --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from caplib import offline_nli  # noqa: E402
from caplib.cap import PROBABILITY_COMPONENTS, CAPScorer  # noqa: E402
from caplib.data import load_sample  # noqa: E402
from caplib.evaluation import report  # noqa: E402
from caplib.paper import load_table  # noqa: E402
from caplib.profiles import load_profile  # noqa: E402
from caplib.runtime import Runtime  # noqa: E402
from caplib.scoring import score_frame  # noqa: E402
from caplib.sweep import sweep  # noqa: E402

BASELINES = ("bleu", "rouge_l", "meteor", "bertscore", "em", "acc")
MEASURES = ["spearman", "kendall", "pairwise_accuracy", "violations", "Acc Eq>Part", "Acc OV>Part", "Acc OV>OI",
            "Acc Alt>Inv"]


def cap_components(model: Path, frame: pd.DataFrame, alpha: float, lam: float, template: bool) -> pd.DataFrame:
    """CAP components of every row, on the given statements or on template statements."""
    scorer = CAPScorer(nli_model=model, statement_model="builtin:template" if template else None, alpha=alpha, lam=lam,
                       runtime=Runtime(device="cpu", progress=False))
    if template:
        return scorer.answer_components(frame["question"], frame["gold_answer"], frame["answer"])
    return scorer.components(frame["premise"], frame["hypothesis"])


def probabilities(components: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(forward, backward) NLI probabilities, columns entailment, neutral, contradiction."""
    table = components[list(PROBABILITY_COMPONENTS)].to_numpy()
    return table[:, :3], table[:, 3:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="backbone directory (default: ensure_backbone())")
    parser.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    args = parser.parse_args(argv)
    model = args.model if args.model is not None else offline_nli.ensure_backbone()
    manifest = json.loads((model / "manifest.json").read_text(encoding="utf-8"))
    profile = load_profile("offline")
    sample = load_sample("cap_correctness")
    test, validation = sample[sample.split == "test"].copy(), sample[sample.split == "validation"].copy()
    started = time.perf_counter()

    scored = score_frame(test, profile, metrics=BASELINES, runtime=Runtime(progress=False))
    frame = scored.frame
    frame["cap"] = cap_components(model, test, profile.alpha, profile.lam, template=False)["cap"].to_numpy()
    frame["cap_template"] = cap_components(model, test, profile.alpha, profile.lam, template=True)["cap"].to_numpy()
    metrics = ["cap", "cap_template", *[m for m in BASELINES if m in frame.columns]]
    table = report(frame, metrics, "label_semantic")
    best = table.loc[[m for m in BASELINES if m in table.index]]
    acceptance = {
        "best_baseline_pairwise": float(best["pairwise_accuracy"].max()),
        "best_baseline_pairwise_metric": str(best["pairwise_accuracy"].idxmax()),
        "fewest_baseline_violations": int(best["violations"].min()),
        "cap_pairwise": float(table.loc["cap", "pairwise_accuracy"]),
        "cap_violations": int(table.loc["cap", "violations"]),
    }
    acceptance["pairwise_margin"] = acceptance["cap_pairwise"] - acceptance["best_baseline_pairwise"]
    acceptance["passed"] = bool(acceptance["pairwise_margin"] >= 0.05
                                and acceptance["cap_violations"] <= acceptance["fewest_baseline_violations"])
    means = frame.groupby("label_semantic")[metrics].mean()

    components = cap_components(model, validation, profile.alpha, profile.lam, template=False)
    forward, backward = probabilities(components)
    grid = sweep(forward, backward, validation["label_semantic"].tolist())
    paper = load_table(12)
    rows = grid.merge(paper[["alpha", "lam"]], on=["alpha", "lam"]).set_index(["alpha", "lam"])
    beside = paper.set_index(["alpha", "lam"])[["spearman", "pairwise_accuracy", "violations"]].join(
        rows[["spearman", "pairwise_accuracy", "violations"]] .mul([100, 100, 1]), rsuffix="_offline")
    best_setting = grid.sort_values(["spearman", "pairwise_accuracy"], ascending=False).iloc[0]

    evaluation = manifest["evaluation"]
    print(f"# Offline NLI backbone: {model}\n")
    print(f"recipe v{manifest['recipe_version']}, seed {manifest['recipe']['seed']}, "
          f"{manifest['pairs']['train_total']} training pairs, {manifest['training']['steps']} steps, "
          f"training {manifest['training']['wall_time_s']} s, whole recipe {manifest['wall_time_s']} s "
          f"({manifest['training']['num_threads']} threads), artifact {manifest['artifact_bytes'] / 2**20:.1f} MiB\n")
    for name, title in (("heldout", "held-out derived pairs"), ("cb", "SuperGLUE CB validation")):
        result = evaluation[name]
        print(f"- {title}: 3-way accuracy {result['accuracy']:.4f} (n={result['n']}), majority class "
              f"'{result['majority_label']}' {result['majority_baseline']:.4f}")
    print("\n## Held-out accuracy by derivation rule\n")
    print(pd.DataFrame(evaluation["heldout"]["by_kind"]).T.to_markdown())
    print("\n## Sample test split (n=%d): offline CAP vs. offline baselines\n" % len(test))
    print(table[MEASURES].to_markdown(floatfmt=".4f"))
    print("\nSkipped metrics:", scored.skipped or "none")
    print("\n## Class means (test split)\n")
    print(means.to_markdown(floatfmt=".4f"))
    print("\n## Acceptance\n")
    print(json.dumps(acceptance, indent=2))
    print("\n## Tab. 12 sweep on the sample's validation split (n=%d) beside the paper\n" % len(validation))
    print(beside.to_markdown(floatfmt=".2f"))
    print(f"\nBest on the full grid (validation): alpha={best_setting['alpha']}, lam={best_setting['lam']}, "
          f"spearman={best_setting['spearman']:.4f}, pairwise={best_setting['pairwise_accuracy']:.4f}, "
          f"violations={int(best_setting['violations'])}")
    print(f"\n(report computed in {time.perf_counter() - started:.0f} s)")
    if args.json is not None:
        args.json.write_text(json.dumps({
            "model": str(model), "manifest_evaluation": evaluation, "training": manifest["training"],
            "test_table": json.loads(table.to_json(orient="index")), "class_means": json.loads(means.to_json()),
            "acceptance": acceptance, "sweep_validation": json.loads(grid.to_json(orient="records")),
            "signatures": {name: str(value) for name, value in scored.signatures.items()}, "skipped": scored.skipped,
        }, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
