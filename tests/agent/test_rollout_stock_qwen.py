"""A stock Qwen2-architecture directory (random weights, the standard Qwen2.5 chat template, no
project tokens) imports as it is and plays a minibugs episode in the docker sandbox through the
same chat layer as the tiny default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qwenfactory import QWEN2_SPECIAL, write_stock_qwen2
from taskfactory import CONFIG, make_calc_task
from transformers import AutoTokenizer

from editcredit.agent.environments import environment_factory
from editcredit.agent.rollout import RolloutConfig, run_episodes
from editcredit.policy.base_job import import_model
from editcredit.policy.generator_factory import load_generator

pytestmark = pytest.mark.docker


def test_a_stock_qwen2_directory_imports_without_added_tokens_and_plays_an_episode(
    tmp_path, docker_sandbox
):
    src = write_stock_qwen2(tmp_path / "stock")
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    out = tmp_path / "models" / "base" / "qwen"
    import_model(str(src), out, {"source": "import", "path": str(src)}, "qwen")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name != "identity.json"} == before
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    assert sorted(tokenizer.get_added_vocab()) == sorted(QWEN2_SPECIAL)  # nothing added
    vocab = json.loads((out / "config.json").read_text())["vocab_size"]
    assert len(tokenizer) == vocab

    generator, chat = load_generator(out, "cpu", {"backend": "transformers"})
    assert chat.stop_ids == (tokenizer.convert_tokens_to_ids("<|im_end|>"),)
    assert chat.tool_format == "tool_call"  # the stock template's; minibugs acts in plain text
    agent = {**CONFIG["agent"], "environment": "minibugs", "max_turns": 2}
    make_env = environment_factory(agent, CONFIG["sandbox"])
    cfg = RolloutConfig(max_turns=2, max_new_tokens=12, max_context_tokens=4096, temperature=1.0)
    task = make_calc_task()
    [episode] = run_episodes(
        [(task, "k0")], lambda: make_env(docker_sandbox), generator, chat, cfg, seed=3
    )
    assert episode.done and episode.env.end_reason
    assert len(episode.env.turns) >= 1
    prompt = tokenizer.decode(episode.token_ids[: episode.loss_mask.index(1)])
    assert prompt.startswith("<|im_start|>system\nYou are Qwen")
    assert prompt.endswith("<|im_end|>\n<|im_start|>assistant\n") and "# Tools" not in prompt
    assert max(episode.token_ids) < vocab
    sampled = sum(episode.loss_mask)
    assert sampled == sum(1 for t in episode.turn_of_token if t >= 0) > 0


def test_a_directory_whose_template_cannot_be_played_is_refused_and_nothing_is_written(
    tmp_path,
):
    src = write_stock_qwen2(tmp_path / "stock")
    config = json.loads((src / "tokenizer_config.json").read_text())
    config["chat_template"] = "{{ messages | length }}" + config["chat_template"]
    (src / "tokenizer_config.json").write_text(json.dumps(config))
    out = tmp_path / "models" / "base" / "bad"
    with pytest.raises(ValueError, match=rf"{src}.*not prefix-stable"):
        import_model(str(src), out, {"source": "import", "path": str(src)}, "bad")
    assert not out.exists()
    del config["chat_template"]
    (src / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=rf"{src}.*no chat_template"):
        import_model(str(src), out, {"source": "import", "path": str(src)}, "bad")
    assert not Path(out).exists()


def test_a_tokenizer_larger_than_the_models_vocabulary_is_refused(tmp_path):
    src = write_stock_qwen2(tmp_path / "stock")
    config = json.loads((src / "config.json").read_text())
    config["vocab_size"] -= 2  # <|im_start|> and <|im_end|> would need new embeddings
    (src / "config.json").write_text(json.dumps(config))
    out = tmp_path / "models" / "base" / "short"
    with pytest.raises(ValueError, match=rf"{src}: the tokenizer has .* vocab_size is"):
        import_model(str(src), out, {"source": "import", "path": str(src)}, "short")
    assert not out.exists()
