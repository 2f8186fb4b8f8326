"""Tokenizer, tiny model and the generation interface (CPU)."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from editcredit.policy.chat import ChatTemplate
from editcredit.policy.generation import TransformersGenerator
from editcredit.policy.model import new_model, tiny_config
from editcredit.policy.tokenizer import train_tokenizer

ARCH = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_layers": 2,
    "num_heads": 2,
    "num_kv_heads": 1,
    "max_positions": 256,
}
TEXTS = [
    "replace calc.py:3\n    return a + b",
    "run",
    "submit",
    "tests: 4 passed, 1 failed\nFAILED test_calc.py::test_add: assert -1 == 5",
] * 20


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny")
    tok = train_tokenizer(TEXTS, 300)
    chat = ChatTemplate(tok)
    model = new_model(tiny_config(len(tok), ARCH, chat.pad, chat.bos, chat.end_of_turn), seed=0)
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    return out


def test_hf_directory_loads_with_auto_classes(saved):
    assert (saved / "model.safetensors").exists()
    tok = AutoTokenizer.from_pretrained(str(saved))
    model = AutoModelForCausalLM.from_pretrained(str(saved))
    assert model.config.model_type == "qwen2"
    chat = ChatTemplate(tok)
    text = "replace calc.py:3\n    return a + b"
    assert tok.decode(chat.encode_text(text)) == text


def _generator(saved):
    tok = AutoTokenizer.from_pretrained(str(saved))
    model = AutoModelForCausalLM.from_pretrained(str(saved)).eval()
    chat = ChatTemplate(tok)
    return TransformersGenerator(model, chat.stop_ids, chat.pad), chat, model


def test_same_seed_same_tokens_and_logprobs_are_exact(saved):
    gen, chat, model = _generator(saved)
    prompts = [
        chat.conversation().start("run the tests"),
        chat.conversation().start("tests: 4 passed, 1 failed and more words here"),
    ]
    a = gen.generate(prompts, 12, 1.0, seed=7)
    b = gen.generate(prompts, 12, 1.0, seed=7)
    assert [o.token_ids for o in a] == [o.token_ids for o in b]
    c = gen.generate(prompts, 12, 1.0, seed=8)
    assert [o.token_ids for o in a] != [o.token_ids for o in c]
    for prompt, out in zip(prompts, a, strict=True):
        ids = torch.tensor([prompt + out.token_ids])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0].float()
        logp = torch.log_softmax(logits, -1)
        expected = [float(logp[len(prompt) - 1 + k, t]) for k, t in enumerate(out.token_ids)]
        assert out.logprobs == pytest.approx(expected, abs=1e-4)


def test_generation_passes_the_cache_without_deprecation_warnings(saved):
    """The KV cache goes under this transformers version's argument name: no FutureWarning
    about ``past_key_values`` on every decoding step."""
    import warnings

    gen, chat, _ = _generator(saved)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gen.generate([chat.conversation().start("run the tests")], 6, 1.0, seed=3)
    assert not [w for w in caught if "past_key_values" in str(w.message)]


def test_temperature_must_be_positive(saved):
    gen, chat, _ = _generator(saved)
    with pytest.raises(ValueError):
        gen.generate([chat.conversation().start("x")], 4, 0.0, seed=1)


def _padded_examples(chat):
    """Two episodes of different lengths: the shorter row is right-padded in a batch."""
    rows = []
    for text, action in (("tests: 4 passed", "run"), ("tests: 1 failed\nassert 3 == 4", "submit")):
        obs = chat.conversation().start(text)
        act = [*chat.encode_text(action), chat.end_of_turn]
        rows.append((obs + act, [0] * len(obs) + [1] * len(act)))
    assert len(rows[0][0]) != len(rows[1][0])
    return rows


def _real_tokens(examples, width):
    """The attention mask of a right-padded batch: 1 on each row's own tokens."""
    return torch.tensor([[int(k < len(seq)) for k in range(width)] for seq, _ in examples])


def _reference_loss(model, ids, weights, attn):
    """The weighted loss the plain way: an attention mask on the padding, logits everywhere."""
    logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1]
    ce = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1), reduction="none"
    )
    w = weights[:, 1:].reshape(-1)
    return (ce * w).sum() / w.sum()


@pytest.mark.parametrize("obs_weight", [0.0, 0.5])
def test_weighted_loss_and_gradient_equal_the_masked_full_logits_loss(saved, obs_weight):
    from editcredit.policy.sft import _batch, weighted_lm_loss

    _, chat, model = _generator(saved)
    examples = _padded_examples(chat)
    ids, weights = _batch(examples, chat.pad, obs_weight, torch.device("cpu"))
    attn = _real_tokens(examples, ids.size(1))
    assert int((attn == 0).sum()) > 0  # the shorter row carries padding

    def loss_and_grads(fn):
        model.zero_grad()
        loss = fn()
        loss.backward()
        return loss.item(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    ours, ours_g = loss_and_grads(lambda: weighted_lm_loss(model, ids, weights))
    ref, ref_g = loss_and_grads(lambda: _reference_loss(model, ids, weights, attn))
    model.zero_grad()
    assert ours == pytest.approx(ref, rel=1e-5)
    assert len(ours_g) == len(ref_g)
    for a, b in zip(ours_g, ref_g, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    if obs_weight == 0.0:  # the actions alone: HF's own masked-label loss
        labels = torch.where(weights > 0, ids, torch.full_like(ids, -100))
        with torch.no_grad():
            hf = model(input_ids=ids, attention_mask=attn, labels=labels).loss
        assert ours == pytest.approx(float(hf), rel=1e-5)


def test_observation_weight_reaches_observation_tokens(saved):
    from editcredit.policy.sft import _batch

    _, chat, _ = _generator(saved)
    _, weights = _batch(_padded_examples(chat)[:1], chat.pad, 0.5, torch.device("cpu"))
    assert float(weights[0, 1]) == 0.5 and float(weights[0, -1]) == 1.0


@pytest.mark.parametrize(
    ("obs_weight", "eot_weight", "action", "closing", "observation"),
    [
        (0.0, 1.0, 1.0, 1.0, 0.0),
        (0.0, 3.0, 1.0, 3.0, 0.0),
        (0.5, 2.0, 1.0, 2.0, 0.5),
    ],
)
def test_end_of_turn_weight_reaches_only_the_token_that_closes_an_action(
    saved, obs_weight, eot_weight, action, closing, observation
):
    from editcredit.policy.sft import _batch

    _, chat, _ = _generator(saved)
    (seq, mask), _ = _padded_examples(chat)
    _, weights = _batch(
        [(seq, mask)], chat.pad, obs_weight, torch.device("cpu"), chat.end_of_turn, eot_weight
    )
    row = weights[0].tolist()
    closes = [
        k for k, (t, m) in enumerate(zip(seq, mask, strict=True)) if m and t == chat.end_of_turn
    ]
    assert closes == [len(seq) - 1]  # the action's own end-of-turn, not the prompt's
    assert row[-1] == closing
    assert all(w == action for w, m in zip(row[:-1], mask[:-1], strict=True) if m)
    assert all(w == observation for w, m in zip(row, mask, strict=True) if not m)


def test_end_of_turn_weight_needs_the_token(saved):
    from policyfactory import sft_config

    from editcredit.policy.sft import train_sft

    _, chat, model = _generator(saved)
    cfg = sft_config(max_steps=1, end_of_turn_loss_weight=2.0)
    with pytest.raises(ValueError, match="end-of-turn token"):
        train_sft(model, _padded_examples(chat), chat.pad, cfg, torch.device("cpu"))


def test_auto_tokenizer_reads_the_same_tokens_as_training(saved):
    trained = train_tokenizer(TEXTS, 300)
    loaded = AutoTokenizer.from_pretrained(str(saved))
    for text in [
        *TEXTS[:4],
        "edit m.py\n    if not (x > 10):\n        return 12345 + x_1",
        "\n\n    \tdef g():  # comment\n",
    ]:
        assert loaded.encode(text, add_special_tokens=False) == trained.encode(
            text, add_special_tokens=False
        )


def test_rename_augmentation_is_consistent_and_seeded():
    from editcredit.policy.base_training import augment_with_renames

    corpus = [(["`clamp` in m.py", "FAILED test_clamp_low"], ["edit m.py\n- value <\n+ value <="])]
    names = [["clamp", "value"]]
    a = augment_with_renames(corpus, names, copies=2, seed=3)
    b = augment_with_renames(corpus, names, copies=2, seed=3)
    assert a == b and len(a) == 3 and a[0] == corpus[0]
    for obs, acts in a[1:]:
        new = obs[0].split("`")[1]
        assert new != "clamp" and "clamp" not in "".join(obs + acts)
        assert obs == [f"`{new}` in m.py", f"FAILED test_{new}_low"]
        assert "value" not in acts[0] and acts[0].startswith("edit m.py\n")
    only_name = augment_with_renames(corpus, names, copies=1, seed=3, locals_too=False)
    assert "value <" in only_name[1][1][0] and "clamp" not in only_name[1][0][0]


@pytest.mark.parametrize("prob,renamed", [(0.0, 0), (1.0, 40)])
def test_rename_rate_replaces_episodes_in_place(prob, renamed):
    from editcredit.policy.base_training import augment_with_renames

    corpus = [([f"`clamp` case {k}"], ["submit"]) for k in range(40)]
    out = augment_with_renames(corpus, [["clamp"]] * 40, copies=0, seed=1, prob=prob)
    assert len(out) == 40 and sum("clamp" not in o[0][0] for o in out) == renamed


def test_seed_identifiers_name_the_function_first():
    from taskfactory import make_calc_task

    from editcredit.agent.expert_corpus import seed_identifiers

    assert seed_identifiers(make_calc_task()) == ["add"]  # a, b: one letter, kept
