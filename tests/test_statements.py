"""caplib.statements: QA -> statement reformulation (Sec. 4, App. B.5, App. C.2).

Template cases carry expected statements written by hand, across the four question types of Tab. 9
(Tab. 10's examples among them) and ARC / OpenBookQA / MMLU-like stems. The seq2seq tests use a tiny
mT5 built on the fly (tests/tiny_seq2seq.py) that goes through the real loading code.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest

from caplib.runtime import Runtime
from caplib.statements import (
    MANIFEST_NAME,
    RULES,
    Seq2SeqStatementGenerator,
    TemplateStatementGenerator,
    evaluate_statements,
    finetune,
    format_input,
    main,
    reformulate,
)
from caplib.statements.evaluation import STATEMENT_ROUGE_L

SHORT = [
    ("What gas do plants release during photosynthesis?", "Oxygen", "Plants release oxygen during photosynthesis.", "wh_object"),
    ("What is the capital of France?", "Paris", "Paris is the capital of France.", "wh_copula"),
    ("What is the official currency of Japan?", "The yen", "The official currency of Japan is the yen.", "wh_copula"),
    ("Which planet is known as the red planet?", "Mars", "Mars is known as the red planet.", "wh_subject"),
    ("Who wrote Hamlet?", "William Shakespeare", "William Shakespeare wrote Hamlet.", "wh_subject"),
    ("Where do penguins live?", "Antarctica", "Penguins live in Antarctica.", "wh_adverbial"),
    ("When did World War II end?", "1945", "World War II ended in 1945.", "wh_adverbial"),
    ("Why do leaves change color in autumn?", "chlorophyll breaks down",
     "Leaves change color in autumn because chlorophyll breaks down.", "wh_adverbial"),
    ("Why is the sky blue?", "the scattering of sunlight", "The sky is blue because of the scattering of sunlight.", "wh_adverbial"),
    ("How many legs does a spider have?", "Eight", "A spider has eight legs.", "how_many"),
    ("How many planets are in the solar system?", "eight", "There are eight planets in the solar system.", "how_many"),
    ("How many bones make up the adult human skeleton?", "206", "206 bones make up the adult human skeleton.", "how_many"),
    ("What is a baby kangaroo called?", "A joey", "A baby kangaroo is called a joey.", "wh_passive"),
    ("What do you call a baby kangaroo?", "A joey", "A baby kangaroo is called a joey.", "wh_passive"),
    ("What does HTML stand for?", "HyperText Markup Language", "HTML stands for HyperText Markup Language.", "wh_object"),
    ("In which country did the ancient Olympic Games originate?", "Greece",
     "The ancient Olympic Games originated in Greece.", "prep_wh"),
    ("In which city is the Colosseum located?", "Rome", "The Colosseum is located in Rome.", "prep_wh"),
    ("What is the name of the fairy in the story of Peter Pan?", "Tinker Bell",
     "The fairy in the story of Peter Pan is named Tinker Bell.", "wh_name"),
    ("What type of animal is a Komodo dragon?", "A lizard", "A Komodo dragon is a lizard.", "wh_copula"),
    ("Which company originally developed the Java programming language?", "Sun Microsystems",
     "Sun Microsystems originally developed the Java programming language.", "wh_subject"),
    ("When was the Declaration of Independence signed?", "1776",
     "The Declaration of Independence was signed in 1776.", "wh_adverbial"),
    ("Where is the Eiffel Tower located?", "Paris", "The Eiffel Tower is located in Paris.", "wh_adverbial"),
    ("What is used to measure temperature?", "A thermometer", "A thermometer is used to measure temperature.", "wh_subject"),
    ("How old is the Earth?", "4.5 billion years", "The Earth is 4.5 billion years old.", "how_adj"),
    ("How long does it take light from the Sun to reach Earth?", "about 8 minutes",
     "Light from the Sun takes about 8 minutes to reach Earth.", "how_adj"),
    ("What should a person do to stay warm in winter?", "wear a coat",
     "A person should wear a coat to stay warm in winter.", "wh_object"),
    ("What do plants depend on for energy?", "the sun", "Plants depend on the sun for energy.", "wh_object"),
    ("What do the interior angles of a triangle add up to?", "180 degrees",
     "The interior angles of a triangle add up to 180 degrees.", "wh_object"),
    ("Which chess piece can only move diagonally?", "The bishop", "The bishop can only move diagonally.", "wh_subject"),
    ("Which instrument has 88 keys in its standard modern form?", "The piano",
     "The piano has 88 keys in its standard modern form.", "wh_subject"),
    ("Which instrument did Louis Armstrong famously play?", "The trumpet",
     "Louis Armstrong famously played the trumpet.", "wh_object"),
    ("Which hormone lowers blood glucose levels?", "Insulin", "Insulin lowers blood glucose levels.", "wh_subject"),
    ("What causes the seasons on Earth?", "the tilt of Earth's axis",
     "The tilt of Earth's axis causes the seasons on Earth.", "wh_subject"),
    ("How does a catalyst speed up a reaction?", "It lowers the activation energy.",
     "A catalyst speeds up a reaction by lowering the activation energy.", "wh_adverbial"),
    ("What time does the meeting start?", "3:30 p.m.", "The meeting starts at 3:30 p.m.", "wh_object"),
    ("Is water a compound?", "Yes", "Water is a compound.", "yes_no"),
    ("Does the moon produce its own light?", "No", "The moon does not produce its own light.", "yes_no"),
    ("Can penguins fly?", "No", "Penguins cannot fly.", "yes_no"),
    ("Name the instrument used to measure atmospheric pressure.", "A barometer",
     "A barometer is the instrument used to measure atmospheric pressure.", "imperative"),
    ("Name three cities in Europe.", "Paris, Rome, Sofia", "Paris, Rome and Sofia are cities in Europe.", "imperative"),
    ("Give an example of a renewable resource.", "wind energy",
     "Wind energy is an example of a renewable resource.", "imperative"),
    # MMLU-style stems and sentence answers
    ("What happens when ice melts?", "It turns into water.", "When ice melts, it turns into water.", "what_happens"),
    ("What will happen if the Earth's rotation speeds up?", "Planetary days will become shorter.",
     "If the Earth's rotation speeds up, planetary days will become shorter.", "what_happens"),
    ("What would most likely happen if the Earth stopped rotating?", "One side would always face the sun.",
     "If the Earth stopped rotating, one side would always face the sun.", "what_happens"),
    ("Which of the following statements is true about the Moon?", "It reflects light from the Sun.",
     "It reflects light from the Sun.", "answer_is_statement"),
    ("What is the most likely cause of the seasons?", "the tilt of the Earth's axis",
     "The most likely cause of the seasons is the tilt of the Earth's axis.", "wh_copula"),
    ("Which of these is an example of a mammal?", "a dog", "A dog is an example of a mammal.", "wh_copula"),
    ("What is the best explanation for the ball slowing down?", "Friction acts on the ball.",
     "The best explanation for the ball slowing down is that friction acts on the ball.", "wh_copula"),
]
COMPLETE = [
    ("The sun is responsible for…", "heating the Earth", "The sun is responsible for heating the Earth.", "completion"),
    ("The sun is responsible for", "for heating the Earth", "The sun is responsible for heating the Earth.", "completion"),
    ("A group of lions is commonly called a…", "Pride", "A group of lions is commonly called a pride.", "completion"),
    ("A scientist who studies rocks is called an…", "Geologist",
     "A scientist who studies rocks is called a geologist.", "completion"),
    ("The tallest animal in the world is the…", "The giraffe", "The tallest animal in the world is the giraffe.", "completion"),
    ("Complete the sentence: Thunder is caused by…", "The rapid expansion of air heated by lightning",
     "Thunder is caused by the rapid expansion of air heated by lightning.", "completion"),
    ("When food is reduced in the stomach", "nutrients are being deconstructed",
     "When food is reduced in the stomach, nutrients are being deconstructed.", "completion"),
    ("If a person wants to stay warm they should", "wear a coat",
     "If a person wants to stay warm they should wear a coat.", "completion"),
    ("An example of a conductor is", "a copper wire", "An example of a conductor is a copper wire.", "completion"),
    ("If the Earth's rotation speeds up,", "Planetary days will become shorter.",
     "If the Earth's rotation speeds up, planetary days will become shorter.", "completion"),
    ("The process by which plants make food is called?", "photosynthesis",
     "The process by which plants make food is called photosynthesis.", "completion"),
    ("Plants release which gas during photosynthesis?", "oxygen", "Plants release oxygen during photosynthesis.", "in_situ"),
    ("Plants need sunlight to", "Plants need sunlight to make food.", "Plants need sunlight to make food.",
     "answer_is_statement"),
]
LONG = [
    ("I have a shirt that is now too small, what can I do to conserve and reuse the fabric?", "Make it into a cleaning rag",
     "I have a shirt that is now too small. I can make it into a cleaning rag to conserve and reuse the fabric.",
     "long+wh_object"),
    ("A scientist wants to measure rainfall. Which tool should she use?", "a rain gauge",
     "A scientist wants to measure rainfall. She should use a rain gauge.", "long+wh_object"),
    ("When a plant is kept in the dark for a week, what happens to it?", "It turns yellow.",
     "When a plant is kept in the dark for a week, it turns yellow.", "long+what_happens"),
    ("A gas is sealed inside a rigid container. The container is heated. What happens to the pressure of the gas?",
     "It increases.", "A gas is sealed inside a rigid container. The container is heated. The pressure of the gas increases.",
     "long+what_happens"),
    ("Anna runs out of eggs. Can a mashed banana replace an egg in the recipe?", "Yes",
     "Anna runs out of eggs. A mashed banana can replace an egg in the recipe.", "long+yes_no"),
    ("A student mixes baking soda and vinegar. Which of the following is evidence of a chemical reaction?", "Bubbles form.",
     "A student mixes baking soda and vinegar. Evidence of a chemical reaction is that bubbles form.", "long+wh_copula"),
    ("A ball is thrown into the air. It slows down as it rises. What force causes the ball to slow down?", "gravity",
     "A ball is thrown into the air. It slows down as it rises. Gravity causes the ball to slow down.", "long+wh_subject"),
]
BLANK = [
    ("Light bends when it passes from air into ______ at an angle.", "water",
     "Light bends when it passes from air into water at an angle.", "blank"),
    ("Fill in the blank: The ___ is the powerhouse of the cell.", "mitochondrion",
     "The mitochondrion is the powerhouse of the cell.", "blank"),
    ("____ is the largest planet in our solar system.", "jupiter", "Jupiter is the largest planet in our solar system.", "blank"),
    ("Water freezes at ____ degrees Celsius and boils at ____ degrees Celsius.", "0; 100",
     "Water freezes at 0 degrees Celsius and boils at 100 degrees Celsius.", "blank"),
    ("___ and ___ are noble gases.", "helium and neon", "Helium and neon are noble gases.", "blank"),
    ("The ______ Ocean lies between Africa and Australia.", "Indian", "The Indian Ocean lies between Africa and Australia.", "blank"),
    ("A period of ten years is called a ______.", "Decade", "A period of ten years is called a decade.", "blank"),
    ("An animal that eats only plants is called a ______.", "Herbivore.",
     "An animal that eats only plants is called a herbivore.", "blank"),
    ("The chemical symbol for gold is ___.", "Au", "The chemical symbol for gold is Au.", "blank"),
    ("The chemical symbol for silver is ___?", "Ag", "The chemical symbol for silver is Ag.", "blank"),
]
FALLBACK = [
    ("Is a tomato a ______ or a vegetable?", "fruit", "Is a tomato a ______ or a vegetable: fruit.", "fallback"),
    ("___ and ___ are noble gases.", "helium", "___ and ___ are noble gases: helium.", "fallback"),
    ("Whose theory explains evolution by natural selection?", "Charles Darwin's",
     "Whose theory explains evolution by natural selection: Charles Darwin's.", "fallback"),
    ("Describe the water cycle.", "Water evaporates and condenses.",
     "Describe the water cycle: Water evaporates and condenses.", "fallback"),
]

CASES = SHORT + COMPLETE + LONG + BLANK + FALLBACK


# ---------------------------------------------------------------------------------------------------------------
# Input format
# ---------------------------------------------------------------------------------------------------------------

def test_format_input_is_the_documented_template_with_whitespace_collapsed():
    assert format_input("What is the capital of France?", "Paris") == \
        "question: What is the capital of France? answer: Paris"
    assert format_input("  Who wrote\nHamlet? ", " William  Shakespeare\t") == \
        "question: Who wrote Hamlet? answer: William Shakespeare"


# ---------------------------------------------------------------------------------------------------------------
# Template generator
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("question, answer, statement, rule", CASES, ids=[c[0][:40] for c in CASES])
def test_template_reformulates_hand_written_cases(question, answer, statement, rule):
    assert reformulate(question, answer) == (statement, rule)


def test_template_covers_every_question_type_and_reports_known_rules():
    generator = TemplateStatementGenerator()
    questions, answers = [c[0] for c in CASES], [c[1] for c in CASES]
    results = generator.generate_with_rules(questions, answers)
    assert [rule for _, rule in results] == generator.last_rules == [c[3] for c in CASES]
    for rule in generator.last_rules:
        assert rule.removeprefix("long+") in RULES
    assert generator.generate(questions, answers) == [c[2] for c in CASES]
    for statement, rule in results:
        assert statement.endswith(".") and "?" not in statement
        if rule != "fallback":
            assert "__" not in statement


def test_template_is_deterministic_and_order_independent():
    generator = TemplateStatementGenerator()
    pairs = [(c[0], c[1]) for c in CASES]
    expected = dict(zip(pairs, generator.generate(*zip(*pairs))))
    shuffled = pairs[:]
    random.Random(0).shuffle(shuffled)
    assert generator.generate(*zip(*shuffled)) == [expected[p] for p in shuffled]


def test_template_fallback_keeps_the_question_and_answer_verbatim():
    statement, rule = reformulate("Whose idea was it?", "Ada's")
    assert (statement, rule) == ("Whose idea was it: Ada's.", "fallback")


def test_generate_rejects_mismatched_or_empty_inputs():
    generator = TemplateStatementGenerator()
    with pytest.raises(ValueError, match="2 questions but 1 answers"):
        generator.generate(["Who wrote Hamlet?", "What is H2O?"], ["Shakespeare"])
    with pytest.raises(ValueError, match="answer 1 is ' '"):
        generator.generate(["Who wrote Hamlet?", "What is H2O?"], ["Shakespeare", " "])


# ---------------------------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------------------------

def test_evaluate_statements_corpus_bleu_rouge_and_em_against_hand_computed_values():
    references = ["The cat sat on the mat.", "Water boils at 100 degrees.", "Paris is the capital of France."]
    predictions = ["The cat sat on the mat", "Water boils at 100 degrees.", "Rome is a city."]
    types = ["short-question", "blank-spaces-task", "short-question"]
    table = evaluate_statements(predictions, references, types)
    assert table.index.tolist() == ["overall", "short-question", "blank-spaces-task"]
    assert table["n"].tolist() == [3, 2, 1]
    # Pair 2 alone: identical -> every score is 1.
    assert table.loc["blank-spaces-task", ["bleu", "rouge_l", "em", "em_strict"]].tolist() == [1.0, 1.0, 1.0, 1.0]
    # EM ignores the missing period (SQuAD normalization); the strict variant does not.
    assert table.loc["overall", "em"] == pytest.approx(2 / 3)
    assert table.loc["overall", "em_strict"] == pytest.approx(1 / 3)
    # ROUGE-L: pair 1 has the same words (1.0); pair 3 shares 'is', 'the'? no: 'is' only ->
    # LCS 1 of 6 and 4 tokens: P = 1/4, R = 1/6, F = 2PR/(P+R) = 0.2.
    assert table.loc["short-question", "rouge_l"] == pytest.approx((1.0 + 0.2) / 2)
    # Corpus BLEU of pairs 1+2 (pair 3 shares no 4-gram, so the overall corpus BLEU is below):
    # every n-gram of the predictions matches, c = 6 + 6 tokens, r = 7 + 6 -> BP = exp(1 - 13/12).
    first_two = evaluate_statements(predictions[:2], references[:2])
    assert first_two.index.tolist() == ["overall"]
    assert first_two.loc["overall", "bleu"] == pytest.approx(np.exp(1 - 13 / 12))
    # Pair 1 alone: BP = exp(1 - 7/6); the mean of sentence BLEU differs from corpus BLEU.
    assert evaluate_statements(predictions[:1], references[:1]).loc["overall", "bleu"] == pytest.approx(np.exp(-1 / 6))
    assert first_two.loc["overall", "sentence_bleu"] == pytest.approx((np.exp(-1 / 6) + 1.0) / 2)
    assert "bleu:corpus" in table.attrs["signature"] and "rouge_l|rouge_score" in table.attrs["signature"]


def test_evaluate_statements_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        evaluate_statements(["a.", "b."], ["a."])


# ---------------------------------------------------------------------------------------------------------------
# Seq2seq generator (tiny mT5)
# ---------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_mt5(tmp_path_factory):
    from tests.tiny_seq2seq import build_tiny_mt5

    return build_tiny_mt5(tmp_path_factory.mktemp("tiny-mt5"))


QUESTIONS = ["What is the capital of France?", "Who wrote Hamlet?", "The sun is responsible for…",
             "Which planet is known as the red planet?", "Who wrote Hamlet?"]
ANSWERS = ["Paris", "William Shakespeare", "heating the Earth", "Mars", "William Shakespeare"]


@pytest.mark.slow
def test_seq2seq_generation_does_not_depend_on_batching_order_or_cache(tiny_mt5, tmp_path):
    def generator(**runtime):
        return Seq2SeqStatementGenerator(tiny_mt5, max_length=24, runtime=Runtime(**{"cache": False, "progress": False,
                                                                                     **runtime}))

    one = generator()
    out = one.generate(QUESTIONS, ANSWERS)
    assert len(out) == 5 and all(isinstance(s, str) for s in out)
    assert out[1] == out[4]  # duplicates are generated once
    assert one.last_stats == {"pairs": 5, "unique": 4, "cached": 0, "computed": 4, "truncated": 0}
    assert [generator().generate([q], [a])[0] for q, a in zip(QUESTIONS, ANSWERS)] == out  # one row per call
    order = [3, 0, 4, 2, 1]
    assert generator().generate([QUESTIONS[i] for i in order], [ANSWERS[i] for i in order]) == [out[i] for i in order]
    generator(cache=True, cache_dir=tmp_path).generate(QUESTIONS[:2], ANSWERS[:2])  # a half-filled cache
    assert generator(cache=True, cache_dir=tmp_path).generate(QUESTIONS, ANSWERS) == out
    # The checkpoint's own generate() with the same settings gives the same statement.
    one.load()
    encoded = one._tokenizer([format_input(QUESTIONS[0], ANSWERS[0])], return_tensors="pt")
    direct = one._model.generate(**encoded, num_beams=4, max_length=24, do_sample=False)
    assert one._tokenizer.decode(direct[0], skip_special_tokens=True).strip() == out[0]


@pytest.mark.slow
def test_seq2seq_cache_returns_identical_statements_without_loading_the_model(tiny_mt5, tmp_path):
    first = Seq2SeqStatementGenerator(tiny_mt5, max_length=24, runtime=Runtime(cache_dir=tmp_path, progress=False))
    out = first.generate(QUESTIONS, ANSWERS)
    again = Seq2SeqStatementGenerator(tiny_mt5, max_length=24, runtime=Runtime(cache_dir=tmp_path, progress=False))
    assert again.generate(QUESTIONS, ANSWERS) == out
    assert again._model is None
    assert again.last_stats["cached"] == 4 and again.last_stats["computed"] == 0
    # Decoding settings are part of the key: another beam width is not served from the cache.
    greedy = Seq2SeqStatementGenerator(tiny_mt5, num_beams=1, max_length=24, runtime=Runtime(cache_dir=tmp_path, progress=False))
    greedy.generate(QUESTIONS[:1], ANSWERS[:1])
    assert greedy.last_stats["computed"] == 1
    assert "beams:4|max_length:24" in str(first.signature())


@pytest.mark.slow
def test_seq2seq_counts_inputs_truncated_at_max_length(tiny_mt5):
    short = Seq2SeqStatementGenerator(tiny_mt5, max_length=8, runtime=Runtime(cache=False, progress=False))
    statements = short.generate(QUESTIONS[:2], ANSWERS[:2])  # 12 and 11 tokens with </s>
    assert short.last_stats["truncated"] == 2 and len(statements) == 2


def test_uncached_hub_model_offline_is_a_clear_error():
    from caplib.checkpoints import CheckpointNotAvailable

    with pytest.raises(CheckpointNotAvailable, match="caplib-tests/no-such-mt5"):
        Seq2SeqStatementGenerator("caplib-tests/no-such-mt5", revision="main")
    with pytest.raises(ValueError, match="no pinned revision"):
        Seq2SeqStatementGenerator("google/mt5-small")


# ---------------------------------------------------------------------------------------------------------------
# Fine-tuning (App. C.2) and the command line
# ---------------------------------------------------------------------------------------------------------------

def _frame(rows):
    return pd.DataFrame(rows, columns=["question", "answer", "statement"])


TRAIN = _frame([
    ("What gas do plants release during photosynthesis?", "oxygen", "Plants release oxygen during photosynthesis."),
    ("The sun is responsible for", "heating the Earth", "The sun is responsible for heating the Earth."),
    ("Light bends when it passes from air into ______ at an angle.", "water",
     "Light bends when it passes from air into water at an angle."),
    ("What is the capital of France?", "Paris", "The capital of France is Paris."),
    ("Which planet is known as the red planet?", "Mars", "Mars is known as the red planet."),
    ("Who wrote Hamlet?", "William Shakespeare", "William Shakespeare wrote Hamlet."),
    ("What is the capital of France?", "Paris", "Paris is the capital of France."),
    ("Who wrote Hamlet?", "Shakespeare", "Shakespeare wrote Hamlet."),
])
VALIDATION = _frame([
    ("What is the capital of France?", "Paris", "The capital of France is Paris."),
    ("Who wrote Hamlet?", "William Shakespeare", "William Shakespeare wrote Hamlet."),
    ("Which planet is known as the red planet?", "Mars", "Mars is known as the red planet."),
])


@pytest.mark.slow
def test_finetune_two_steps_writes_a_checkpoint_and_manifest_that_reload(tiny_mt5, tmp_path):
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from caplib.baselines import score

    out = finetune(TRAIN, VALIDATION, tiny_mt5, tmp_path / "model", batch_size=2, grad_accum=2, max_steps=2,
                   seed=0, device="cpu", max_length=24, progress=False)
    assert (out / "config.json").is_file() and (out / "spiece.model").is_file()
    manifest = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["stopped"] == {"epoch": 1, "steps": 2, "reason": "max_steps"}
    assert manifest["best_epoch"] == 1 and manifest["best_steps"] == 2
    assert manifest["seed"] == 0 and manifest["input_template"] == "question: {question} answer: {answer}"
    hyper = manifest["hyperparameters"]
    assert (hyper["optimizer"], hyper["lr"], hyper["batch_size"], hyper["grad_accum"], hyper["epochs"]) == \
        ("AdamW", 5e-5, 2, 2, 15)
    assert manifest["data"]["train_rows"] == 8 and manifest["data"]["validation_rows"] == 3
    assert len(manifest["data"]["sha256"]) == 64
    assert {"torch", "transformers", "python", "caplib"} <= set(manifest["versions"])
    # Two optimizer steps changed the weights.
    base = AutoModelForSeq2SeqLM.from_pretrained(tiny_mt5).state_dict()
    tuned = AutoModelForSeq2SeqLM.from_pretrained(out).state_dict()
    assert any(not torch.equal(base[k], tuned[k]) for k in base)
    # The saved checkpoint reloads through the generator and reproduces the recorded validation ROUGE-L.
    generator = Seq2SeqStatementGenerator(out, max_length=24, runtime=Runtime(cache=False, progress=False))
    predictions = generator.generate(VALIDATION.question, VALIDATION.answer)
    recomputed = float(np.mean(score("rouge_l", VALIDATION.statement.tolist(), predictions, **STATEMENT_ROUGE_L)))
    assert manifest["best_validation_rouge_l"] == pytest.approx(recomputed, abs=1e-12)
    assert manifest["history"][0]["validation_rouge_l"] == manifest["best_validation_rouge_l"]


@pytest.mark.slow
def test_finetune_early_stopping_keeps_the_best_epoch(tiny_mt5, tmp_path):
    out = finetune(TRAIN, VALIDATION, tiny_mt5, tmp_path / "model", epochs=4, patience=1, batch_size=4, grad_accum=1,
                   seed=1, device="cpu", max_length=24, progress=False)
    manifest = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    scores = [entry["validation_rouge_l"] for entry in manifest["history"]]
    assert [entry["steps"] for entry in manifest["history"]] == [2 * (i + 1) for i in range(len(scores))]
    best = int(np.argmax(scores))  # first maximum: later ties do not replace the saved checkpoint
    assert manifest["best_epoch"] == best + 1 and manifest["best_validation_rouge_l"] == scores[best]
    if manifest["stopped"]["reason"] == "patience":  # one epoch without improvement stops training
        assert len(scores) == best + 2 and scores[-1] <= scores[best]
    else:
        assert manifest["stopped"]["reason"] == "epochs" and len(scores) == 4


def test_finetune_checks_its_data_before_loading_anything(tmp_path):
    with pytest.raises(ValueError, match="train_df lacks column"):
        finetune(TRAIN.drop(columns="statement"), VALIDATION, "unused", tmp_path)
    with pytest.raises(ValueError, match="epochs, batch_size"):
        finetune(TRAIN, VALIDATION, "unused", tmp_path, grad_accum=0)


def _write_statements_csv(path):
    rows = []
    splits = ["train"] * 4 + ["validation"] * 2 + ["test"] * 4
    types = ["short-question", "sentence-to-complete", "long-question", "blank-spaces-task"]
    source = pd.concat([TRAIN, VALIDATION.iloc[:2]], ignore_index=True)
    for i, (row, split) in enumerate(zip(source.itertuples(), splits)):
        rows.append({"id": f"t{i}", "language": "en", "subject": "", "question": row.question, "answer": row.answer,
                     "statement": row.statement, "label_question_type": types[i % 4], "split": split})
    pd.DataFrame(rows).to_csv(path, index=False)
    return pd.DataFrame(rows)


def test_cli_evaluates_the_template_generator(tmp_path, capsys):
    data = tmp_path / "statements.csv"
    frame = _write_statements_csv(data)
    assert main(["evaluate", "--model", "template", "--data", str(data), "--predictions", str(tmp_path / "p.csv")]) == 0
    printed = capsys.readouterr().out
    assert "statements:template" in printed and "overall" in printed and "fallback rate" in printed
    written = pd.read_csv(tmp_path / "p.csv")
    test = frame[frame.split == "test"]
    assert written.prediction.tolist() == TemplateStatementGenerator().generate(test.question, test.answer)
    assert set(written.rule) <= set(RULES)


@pytest.mark.slow
def test_cli_trains_and_evaluates_a_seq2seq_model(tiny_mt5, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CAPLIB_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "statements.csv"
    _write_statements_csv(data)
    out = tmp_path / "model"
    assert main(["train", "--data", str(data), "--base", str(tiny_mt5), "--out", str(out), "--max-steps", "1",
                 "--max-length", "24", "--num-beams", "2", "--device", "cpu"]) == 0
    assert "best checkpoint" in capsys.readouterr().out
    assert json.loads((out / MANIFEST_NAME).read_text())["hyperparameters"]["num_beams"] == 2
    assert main(["evaluate", "--model", str(out), "--data", str(data), "--max-length", "24", "--device", "cpu"]) == 0
    printed = capsys.readouterr().out
    assert "statements:" in printed and "short-question" in printed


# ---------------------------------------------------------------------------------------------------------------
# The authors' published settings (the paper profile's statements.generation and statements.training)


def test_learning_rate_schedules_equal_transformers_own():
    import torch
    from transformers import get_cosine_schedule_with_warmup, get_linear_schedule_with_warmup

    from caplib.statements.training import learning_rate_factor

    for schedule, reference in (("cosine", get_cosine_schedule_with_warmup),
                                ("linear", get_linear_schedule_with_warmup)):
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
        theirs = reference(optimizer, num_warmup_steps=5, num_training_steps=47)
        expected = []
        for _ in range(48):
            expected.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            theirs.step()
        ours = [learning_rate_factor(step, total=47, warmup=5, schedule=schedule) for step in range(48)]
        assert ours == pytest.approx(expected, abs=1e-12)


def test_finetune_records_weight_decay_warmup_and_cosine(tiny_mt5, tmp_path):
    out = finetune(TRAIN, VALIDATION, tiny_mt5, tmp_path / "model", batch_size=2, grad_accum=2, max_steps=1,
                   seed=0, device="cpu", max_length=24, progress=False, weight_decay=0.01, warmup_ratio=0.1,
                   schedule="cosine", patience=8)
    hyper = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))["hyperparameters"]
    assert (hyper["weight_decay"], hyper["schedule"], hyper["patience"]) == (0.01, "cosine decay to 0, warm-up "
                                                                              "ratio 0.1", 8)
    with pytest.raises(ValueError, match="schedule must be 'linear' or 'cosine'"):
        finetune(TRAIN, VALIDATION, tiny_mt5, tmp_path / "x", schedule="constant", device="cpu", progress=False)


def test_the_paper_profile_carries_the_authors_settings():
    from caplib.profiles import load_profile

    paper = load_profile("paper", locked=False)
    assert paper.nli_revision == "bab4bc7178836f731dcfd18c06ca9def0a137712"
    assert paper.statement_base_revision == "73fb5dbe4756edadc8fbe8c769b0a109493acf7a"
    assert dict(paper.statement_generation) == {"num_beams": 4, "max_input_length": 128, "max_new_tokens": 512}
    assert dict(paper.statement_training) == {"epochs": 15, "batch_size": 4, "grad_accum": 2, "lr": 5e-5,
                                              "weight_decay": 0.01, "warmup_ratio": 0.1, "schedule": "cosine",
                                              "patience": 8}
    assert paper.cap_kwargs()["statement_settings"] == dict(paper.statement_generation)


def test_a_profile_setting_that_does_not_exist_is_named(tmp_path):
    import yaml

    from caplib.profiles import PROFILE_DIR, ProfileError, load_profile

    settings = yaml.safe_load((PROFILE_DIR / "paper.yaml").read_text())
    settings["statements"]["generation"]["beams"] = 4
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(settings))
    with pytest.raises(ProfileError, match="statements.generation.beams is not a setting"):
        load_profile(tmp_path / "p.yaml")


def test_generation_cuts_inputs_and_new_tokens_as_the_authors_did(tiny_mt5):
    runtime = Runtime(cache=False, progress=False)
    long_question = "Which of these " + "very long words " * 40 + "is right?"
    capped = Seq2SeqStatementGenerator(tiny_mt5, max_input_length=16, max_new_tokens=3, runtime=runtime)
    capped.load()
    calls = []
    real_generate = capped._model.generate

    def spy(**kwargs):  # the real generate, its inputs and limits recorded
        generated = real_generate(**kwargs)
        calls.append((kwargs["input_ids"].shape[1], kwargs["max_new_tokens"], kwargs["max_length"],
                      generated.shape[1]))
        return generated

    capped._model.generate = spy
    outputs = capped.generate([long_question, "Who wrote Hamlet?"], ["Paris", "Shakespeare"])
    assert capped.last_stats["truncated"] == 1  # the long input, cut at 16 tokens
    assert max(length for length, *_ in calls) == 16
    assert all(new == 3 and total is None and generated <= 1 + 3 for _, new, total, generated in calls)
    assert str(capped.signature()).endswith("|beams:4|max_input:16|max_new:3")
    # the first 16 tokens of the input decide: a different tail after them changes nothing
    other_tail = long_question.replace("is right?", "was wrong!")
    assert capped.generate([other_tail], ["Paris"]) == outputs[:1]
    assert "max_input" not in str(Seq2SeqStatementGenerator(tiny_mt5, runtime=runtime).signature())
