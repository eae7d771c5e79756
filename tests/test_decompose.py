"""caplib.decompose: the rules on hand-written statements (lists, clauses, causes, relatives, appositions,
extensions, negations and collective predicates that must not split), the question's frame, insertions."""

from __future__ import annotations

import pytest

from caplib.decompose import RULES, RuleDecomposer, decompose, insertion_units, split_sentences

SPLITS = [
    # lists: the frame once per item, a subject list made singular
    ("Paris, Rome and Sofia are cities in Europe.",
     ["Paris is a city in Europe.", "Rome is a city in Europe.", "Sofia is a city in Europe."]),
    ("Paris, Rome, and Sofia are cities in Europe.",
     ["Paris is a city in Europe.", "Rome is a city in Europe.", "Sofia is a city in Europe."]),
    ("Paris and Berlin are cities in Europe.", ["Paris is a city in Europe.", "Berlin is a city in Europe."]),
    ("1,000 and 2,000 are even numbers.", ["1,000 is an even number.", "2,000 is an even number."]),
    ("Plants need water and light.", ["Plants need water.", "Plants need light."]),
    ("The flag is red, white and blue.", ["The flag is red.", "The flag is white.", "The flag is blue."]),
    ("Mammals include whales, bats and humans.", ["Mammals include whales.", "Mammals include bats.",
                                                  "Mammals include humans."]),
    ("Earth's four layers are comprised mainly of iron, oxygen, silicon and magnesium.",
     ["Earth's four layers are comprised mainly of iron.", "Earth's four layers are comprised mainly of oxygen.",
      "Earth's four layers are comprised mainly of silicon.",
      "Earth's four layers are comprised mainly of magnesium."]),
    ("Earth's four layers are comprised mainly of gas and liquid rather than stone.",
     ["Earth's four layers are comprised mainly of gas rather than stone.",
      "Earth's four layers are comprised mainly of liquid rather than stone."]),
    # clauses and sentences
    ("Ice melts at 0 degrees; water boils at 100 degrees.", ["Ice melts at 0 degrees.", "Water boils at 100 degrees."]),
    ("The sun is a star, and the moon is a satellite.", ["The sun is a star.", "The moon is a satellite."]),
    ("Iron rusts, but the gold coin does not rust.", ["Iron rusts.", "The gold coin does not rust."]),
    ("The moon orbits the Earth, and it reflects sunlight.", ["The moon orbits the Earth.", "It reflects sunlight."]),
    ("Water boils at 100 degrees. Ice melts at 0 degrees.", ["Water boils at 100 degrees.", "Ice melts at 0 degrees."]),
    # causes
    ("The plant fails to grow because photosynthesis needs light.",
     ["The plant fails to grow.", "Photosynthesis needs light."]),
    ("Because it rained, the ground is wet.", ["The ground is wet.", "It rained."]),
    ("The room got cooler, so Sean started to shiver.", ["The room got cooler.", "Sean started to shiver."]),
    # relative clauses (which / who / restrictive that)
    ("Plants make sugar, which the animals eat.", ["Plants make sugar.", "The animals eat sugar."]),
    ("The book, which she wrote quickly, sold well.", ["The book sold well.", "She wrote the book quickly."]),
    ("The bulb gives off heat, which warms the room.", ["The bulb gives off heat.", "Heat warms the room."]),
    ("Copper, which conducts electricity, is used in wires.", ["Copper is used in wires.", "Copper conducts electricity."]),
    ("Marie Curie, who discovered radium, won two Nobel prizes.",
     ["Marie Curie won two Nobel prizes.", "Marie Curie discovered radium."]),
    ("Respiration is a process that releases energy.", ["Respiration is a process.", "A process releases energy."]),
    # appositions
    ("Paris, the capital of France, is a large city.", ["Paris is a large city.", "Paris is the capital of France."]),
    ("Sofia, the capital of Bulgaria, lies near Vitosha.",
     ["Sofia lies near Vitosha.", "Sofia is the capital of Bulgaria."]),
    ("Bees, the main pollinators of many crops, are declining.",
     ["Bees are declining.", "Bees are the main pollinators of many crops."]),
    # extensions: the sentence without it, and with it
    ("The skeletal system, through the bones of the skull, protects the brain.",
     ["The skeletal system protects the brain.",
      "The skeletal system through the bones of the skull protects the brain."]),
    ("The missing information is its mass, measured with a balance.",
     ["The missing information is its mass.", "The missing information is its mass measured with a balance."]),
    ("Magnesium burns with a bright light, producing a white powder.",
     ["Magnesium burns with a bright light.", "Magnesium burns with a bright light producing a white powder."]),
    ("The plant died because of the drought.", ["The plant died.", "The plant died because of the drought."]),
    ("In addition to light, a lightbulb produces thermal energy, given off mostly as infrared radiation.",
     ["In addition to light, a lightbulb produces thermal energy.",
      "In addition to light, a lightbulb produces thermal energy given off mostly as infrared radiation."]),
]

WHOLE = [
    # negations: a coordination or cause in their scope does not split
    "A plant left in the dark does not grow and does not flower.",
    "Penguins cannot fly and swim.",
    "No mammal lays eggs and flies.",
    "Ice melts without heat and light.",
    "Water does not boil because it is cold.",
    "The cell contains neither a nucleus nor a wall.",
    # disjunctions assert no item
    "The answer is Paris or Rome.",
    "Tokyo is not in Europe or Asia.",
    # collective predicates
    "Hydrogen and oxygen combine to form water.",
    "Salt is a mixture of sodium and chlorine.",
    "The distance between Paris and Rome is large.",
    # complement clauses are not relatives
    "The experiment shows that plants need light.",
    "Scientists know that the Earth is round.",
    "This indicates that a chemical reaction took place.",
    # single units
    "The capital of France is Paris.",
    "A satellite orbits a terrestrial body.",
    "The sequence 5′ CGA TTG 3′ pairs with 3′ GCT AAC 5′.",
    "Florida has the most sunlight energy available during June.",
    # an object relative whose verb's place is beyond the rule's guess: no unit is made up
    "The book, which she wrote in Paris in 1990, sold well.",
]


@pytest.mark.parametrize(("statement", "units"), SPLITS, ids=[s for s, _ in SPLITS])
def test_rules_split(statement, units):
    assert decompose(statement) == units


@pytest.mark.parametrize("statement", WHOLE)
def test_what_must_not_split_comes_back_whole(statement):
    assert decompose(statement) == [statement]


def test_there_are_at_least_forty_hand_written_cases():
    assert len(SPLITS) + len(WHOLE) >= 40


@pytest.mark.parametrize(("statement", "question", "units"), [
    # the question's own list is frame, not answer
    ("The skin, lungs, and kidneys work together to help eliminate body wastes.",
     "The skin, lungs, and kidneys work together to", None),
    ("The heart and lungs need oxygen to make energy.", "Why do the heart and lungs need oxygen?", None),
    ("Rock and roll is a genre of music.", "What genre is rock and roll?", None),
    # the frame alone (the question's words) is no unit: one unit left, the statement comes back whole
    ("Animals get energy from plants because plants make sugar.", "Why do animals get energy from plants?", None),
    # an answer's list is split, each item in the question's frame
    ("Paris, Rome and Sofia are cities in Europe.", "Name 3 cities in Europe.",
     ["Paris is a city in Europe.", "Rome is a city in Europe.", "Sofia is a city in Europe."]),
    ("Plants need water and light.", "What do plants need?", ["Plants need water.", "Plants need light."]),
])
def test_the_question_frame(statement, question, units):
    assert decompose(statement, question=question) == (units or [statement])


def test_without_the_question_a_fixed_phrase_is_split():
    """What the question's frame protects (a documented limit of rules without a tagger)."""
    assert decompose("Rock and roll is a genre of music.") == ["Rock is a genre of music.", "Roll is a genre of music."]


def test_insertions_against_a_reference():
    gold = "Shifting cultivation is practiced in tropical forests."
    assert insertion_units("Shifting cultivation is practiced in tropical forests with thin soils.", gold) == [
        gold, "Shifting cultivation is practiced in tropical forests with thin soils."]
    # two insertions: the shared part, and each insertion in it
    assert insertion_units("Big tropical forests grow fast near rivers.", "Tropical forests grow fast.") == [
        "Tropical forests grow fast.", "Big tropical forests grow fast.", "Tropical forests grow fast near rivers."]
    # a partial answer against the gold: the gold is the partial plus its missing word
    assert insertion_units(gold, "Shifting cultivation is practiced in forests.") == [
        "Shifting cultivation is practiced in forests.", gold]
    for statement, reference in [("Ice does not melt when heated.", "Ice melts when heated."),  # negation
                                 ("Ice never melts when heated.", "Ice melts when heated."),
                                 ("Ice melts when cooled.", "Ice melts when heated."),  # substitution
                                 ("Ice melts when heated.", "Ice melts when heated."),  # identical
                                 ("Ice melts, when heated.", "Ice melts when heated."),  # punctuation only
                                 ("Ice melts.", "Ice melts when heated.")]:  # a deletion
        assert insertion_units(statement, reference) == [statement]


def test_sentences():
    assert split_sentences("Water boils at 100 degrees. Ice melts, e.g. in a glass.  Dr. Who agrees!") == [
        "Water boils at 100 degrees.", "Ice melts, e.g. in a glass.", "Dr. Who agrees!"]
    assert split_sentences("") == []
    with pytest.raises(TypeError, match="expected a string"):
        split_sentences(None)  # type: ignore[arg-type]


def test_rules_can_be_chosen_and_sign_the_scores():
    only_lists = RuleDecomposer(rules=("lists",))
    assert only_lists.split("Plants need water, which falls as rain.") == ["Plants need water, which falls as rain."]
    assert only_lists.split("Plants need water and light.") == ["Plants need water.", "Plants need light."]
    assert str(RuleDecomposer().signature()) == f"decompose:rules|version:1|rules:{'+'.join(RULES)}"
    with pytest.raises(ValueError, match="unknown decomposition rule"):
        RuleDecomposer(rules=("verbs",))


def test_batch_interface_and_errors():
    decomposer = RuleDecomposer()
    assert decomposer.decompose(["Plants need water and light.", "Ice melts."]) == [
        ["Plants need water.", "Plants need light."], ["Ice melts."]]
    with pytest.raises(ValueError, match="1 questions for 2 statements"):
        decomposer.decompose(["a", "b"], ["q"])
    with pytest.raises(TypeError, match="a statement must be a string"):
        decomposer.split(3)  # type: ignore[arg-type]


def test_decomposition_is_deterministic():
    statement = "Paris, the capital of France, which lies on the Seine, hosts museums, parks and cafes."
    assert len({tuple(decompose(statement)) for _ in range(5)}) == 1
