"""The Reuters experiment's preprocessing (bench/experiments/reuters.py), checked on a tiny
corpus against counts done by hand: the vocabulary comes from the training part only."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "experiments" / "reuters.py"


@pytest.fixture(scope="module")
def reuters():
    spec = importlib.util.spec_from_file_location("reuters_experiment", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_tokenize(reuters):
    # lower case, digits -> '#', "the"/"and"/"of" are stop words, entities decoded
    assert reuters.tokenize("The OIL price rose 12.5 pct in 1987 &amp; Grain-exports") == [
        "oil", "price", "rose", "##", "#", "pct", "####", "grain", "exports"]
    assert reuters.tokenize("and of the") == []


def test_count_vectors_use_training_words_only(reuters):
    docs = [["oil", "oil", "wheat"], ["oil", "bank"], ["wheat", "wheat", "bank"],
            ["bank", "oil", "tariff", "tariff", "tariff"]]
    train, test = np.array([0, 1, 2]), np.array([3])
    # training counts: oil 3, wheat 3, bank 2 -> min_count 3 keeps oil and wheat (sorted)
    Xtr, Xte, vocab = reuters.count_vectors(docs, train, test, 3)
    assert vocab == ["oil", "wheat"]
    np.testing.assert_array_equal(Xtr, [[2, 1], [1, 0], [0, 2]])
    # "tariff" appears only in the test document: it is not a feature
    np.testing.assert_array_equal(Xte, [[1, 0]])


def test_interval_drops_best_and_worst(reuters):
    assert reuters.interval(np.array([0.5, 0.9, 0.7, 0.6, 0.8])) == (0.6, 0.8)
