"""A checkpoint's recorded generators: seeded from the run's seed, so state/rng.json is a
function of it, and restored exactly on resume."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import torch

from editcredit.rl.checkpoint import restore_rng, rng_state, seed_rng

FRESH_PROCESS = (
    "import json; from editcredit.rl.checkpoint import rng_state, seed_rng; "
    "seed_rng(42); print(json.dumps(rng_state()))"
)


def test_a_seeded_state_is_the_same_in_two_fresh_processes():
    # Python and NumPy start from the OS's entropy in each process: only the seed makes them agree
    runs = [
        subprocess.run(
            [sys.executable, "-c", FRESH_PROCESS], capture_output=True, text=True, check=True
        )
        for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout


def test_seeds_differ_and_each_generator_is_seeded():
    seed_rng(1)
    one = rng_state()
    seed_rng(2)
    two = rng_state()
    for name in ("python", "numpy", "torch"):
        assert one[name] != two[name], name


def test_a_restored_state_draws_what_the_saved_one_would():
    seed_rng(7)
    saved = rng_state()
    expected = (random.random(), float(np.random.rand()), float(torch.rand(1)))
    random.seed(0), np.random.seed(0), torch.manual_seed(0)
    restore_rng(saved)
    assert (random.random(), float(np.random.rand()), float(torch.rand(1))) == expected
