"""A segment's checkpoint carries its base's tokenizer with the chat template, so the next
segment and evaluation play it through the same template."""

from __future__ import annotations

import torch
from policyfactory import tiny_qwen2
from transformers import AutoTokenizer

from editcredit.policy.chat import ChatTemplate
from editcredit.policy.tokenizer import train_tokenizer
from editcredit.rl.checkpoint import save_segment


def test_a_checkpoint_keeps_the_chat_template(tmp_path):
    base = tmp_path / "base"
    train_tokenizer(["run", "submit", "tests: 4 passed"] * 10, 300).save_pretrained(str(base))
    assert (base / "chat_template.jinja").is_file()  # saved apart from tokenizer_config.json
    model = tiny_qwen2()
    optimizer = torch.optim.AdamW(model.parameters())
    save_segment(tmp_path / "step_1", model, base, optimizer, {}, {})
    saved = tmp_path / "step_1" / "model"
    assert (saved / "chat_template.jinja").read_bytes() == (
        base / "chat_template.jinja"
    ).read_bytes()
    before = ChatTemplate(AutoTokenizer.from_pretrained(str(base))).conversation().start("hi")
    after = ChatTemplate(AutoTokenizer.from_pretrained(str(saved))).conversation().start("hi")
    assert before == after


def test_a_checkpoints_state_files_are_their_records(tmp_path):
    """state/rng.json and state/cursor.json have the keys of RngState and SegmentState."""
    import json

    from record_shapes import assert_record

    from editcredit.rl.checkpoint import RngState, SegmentState, load_state
    from editcredit.rl.cursor import DataCursor
    from editcredit.rl.health import HealthMonitor

    base = tmp_path / "base"
    train_tokenizer(["run", "submit", "tests: 4 passed"] * 10, 300).save_pretrained(str(base))
    model = tiny_qwen2()
    optimizer = torch.optim.AdamW(model.parameters())
    state: SegmentState = {
        "cursor": DataCursor(42).to_dict(),
        "health": HealthMonitor(streak_limit=3, window=64, min_availability=0.95).state(),
        "step": 3,
    }
    save_segment(tmp_path / "step_3", model, base, optimizer, state, {})
    saved = tmp_path / "step_3" / "state"
    assert_record(json.loads((saved / "rng.json").read_text()), RngState)
    assert_record(json.loads((saved / "cursor.json").read_text()), SegmentState, ordered=False)
    assert load_state(saved)[1] == state
