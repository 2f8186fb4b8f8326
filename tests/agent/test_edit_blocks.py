"""METHOD §2: edit blocks, eligibility, score-blind selection and the counterfactual tree."""

from __future__ import annotations

import hashlib
import inspect
import json

import pytest

from editcredit.agent.edit_blocks import (
    EditBlock,
    FileChange,
    TurnChanges,
    block_state_before,
    counterfactual_tree,
    credited_turns,
    edit_blocks,
    is_default_test_path,
    select_block,
    selection_hash,
)


def text(label: str) -> str:
    """The file content that version ``label`` stands for."""
    return f"# version {label}\nvalue = {label!r}\n"


def h(label: str | None) -> str | None:
    """Content hash of version ``label`` (None stays None: the file is absent)."""
    return None if label is None else hashlib.sha256(text(label).encode()).hexdigest()


def episode(*turns: dict[str, tuple[str | None, str | None]] | None) -> list[TurnChanges]:
    """One record per assistant turn, ``{path: (before label, after label)}``; ``None`` or ``{}``
    is a turn that changed nothing."""
    return [
        TurnChanges.from_mapping(i, {p: (h(b), h(a)) for p, (b, a) in (t or {}).items()})
        for i, t in enumerate(turns)
    ]


def summary(blocks: list[EditBlock]) -> list[tuple[tuple[int, ...], tuple[str, ...], tuple]]:
    return [(b.turns, b.paths, b.reasons) for b in blocks]


# --------------------------------------------------------------------------------------------
# Block boundaries and eligibility
# --------------------------------------------------------------------------------------------

BLOCK_CASES = [
    pytest.param(
        episode({"a.py": ("a0", "a1")}, {"b.py": ("b0", "b1")}, {"a.py": ("a1", "a2")}),
        [((0, 1, 2), ("a.py", "b.py"), ())],
        id="consecutive-editing-turns-one-block",
    ),
    pytest.param(
        episode({"a.py": ("a0", "a1")}, None, {"b.py": ("b0", "b1")}),
        [((0,), ("a.py",), ()), ((2,), ("b.py",), ())],
        id="non-editing-turn-splits",
    ),
    pytest.param(
        [
            TurnChanges.from_mapping(0, {"a.py": (h("a0"), h("a1"))}),
            TurnChanges.from_mapping(2, {"b.py": (h("b0"), h("b1"))}),
            TurnChanges.from_mapping(3, {"c.py": (h("c0"), h("c1"))}),
        ],
        [((0,), ("a.py",), ()), ((2, 3), ("b.py", "c.py"), ())],
        id="unrecorded-turn-splits",
    ),
    pytest.param(
        episode(None, None, {"a.py": ("a0", "a1")}, {"a.py": ("a1", "a2")}, None),
        [((2, 3), ("a.py",), ())],
        id="leading-and-trailing-idle-turns",
    ),
    pytest.param(episode(None, {}, None), [], id="no-edits-no-blocks"),
    pytest.param([], [], id="empty-episode"),
    pytest.param(
        episode({"tests/test_a.py": ("t0", "t1")}),
        [((0,), ("tests/test_a.py",), ("touches test path: tests/test_a.py",))],
        id="test-path-ineligible",
    ),
    pytest.param(
        episode({"src/a.py": ("a0", "a1")}, {"conftest.py": ("c0", "c1")}),
        [((0, 1), ("conftest.py", "src/a.py"), ("touches test path: conftest.py",))],
        id="test-path-among-source-ineligible",
    ),
    pytest.param(
        episode({"a.py": ("a0", "a1")}, {"a.py": ("a1", "a0")}),
        [((0, 1), ("a.py",), ("no net effect",))],
        id="edit-then-revert-no-net-effect",
    ),
    pytest.param(
        episode({"new.py": (None, "n1")}, {"new.py": ("n1", None)}),
        [((0, 1), ("new.py",), ("no net effect",))],
        id="create-then-delete-no-net-effect",
    ),
    pytest.param(
        episode({"a.py": ("a0", "a1"), "b.py": ("b0", "b1")}, {"a.py": ("a1", "a0")}),
        [((0, 1), ("a.py", "b.py"), ())],
        id="one-path-reverted-other-changed-eligible",
    ),
    pytest.param(
        episode({"a.py": ("a0", "a1")}, None, {"b.py": ("b0", "b1")}, None, {"a.py": ("a1", "a2")}),
        [
            ((0,), ("a.py",), ("path modified later: a.py",)),
            ((2,), ("b.py",), ()),
            ((4,), ("a.py",), ()),
        ],
        id="path-modified-later-other-block-eligible",
    ),
    pytest.param(
        episode({"a.py": ("a0", "a1")}, None, {"a.py": ("a1", None)}),
        [((0,), ("a.py",), ("path modified later: a.py",)), ((2,), ("a.py",), ())],
        id="path-deleted-later",
    ),
    pytest.param(
        episode(
            {"conftest.py": ("c0", "c1"), "test_b.py": ("t0", "t1"), "a.py": ("a0", "a1")},
            {"conftest.py": ("c1", "c0"), "test_b.py": ("t1", "t0"), "a.py": ("a1", "a0")},
            None,
            {"a.py": ("a0", "a2"), "test_b.py": ("t0", "t2")},
        ),
        [
            (
                (0, 1),
                ("a.py", "conftest.py", "test_b.py"),
                (
                    "touches test path: conftest.py",
                    "touches test path: test_b.py",
                    "no net effect",
                    "path modified later: a.py",
                    "path modified later: test_b.py",
                ),
            ),
            ((3,), ("a.py", "test_b.py"), ("touches test path: test_b.py",)),
        ],
        id="multiple-reasons-in-order",
    ),
]


@pytest.mark.parametrize("turns,expected", BLOCK_CASES)
def test_edit_blocks(turns, expected):
    blocks = edit_blocks(turns, is_default_test_path)
    assert summary(blocks) == expected
    assert [b.index for b in blocks] == list(range(len(blocks)))
    assert all(b.eligible == (not b.reasons) for b in blocks)


def test_custom_test_path_predicate():
    turns = episode({"spec/check_a.py": ("s0", "s1")}, None, {"a.py": ("a0", "a1")})
    blocks = edit_blocks(turns, lambda p: p.startswith("spec/"))
    assert summary(blocks) == [
        ((0,), ("spec/check_a.py",), ("touches test path: spec/check_a.py",)),
        ((2,), ("a.py",), ()),
    ]


@pytest.mark.parametrize(
    "path,expected",
    [
        pytest.param("test_a.py", True, id="test_-prefix"),
        pytest.param("pkg/a_test.py", True, id="_test-suffix"),
        pytest.param("pkg/conftest.py", True, id="conftest"),
        pytest.param("tests/helpers.py", True, id="tests-dir"),
        pytest.param("pkg/test/data.json", True, id="nested-test-dir"),
        pytest.param("src/pkg/mod.py", False, id="source"),
        pytest.param("src/testing_utils.py", False, id="test-in-name-only"),
        pytest.param("test_data.txt", False, id="test_-prefix-not-python"),
        pytest.param("tests.py", False, id="file-named-tests"),
        pytest.param("pkg/contest.py", False, id="not-conftest"),
    ],
)
def test_is_default_test_path(path, expected):
    assert is_default_test_path(path) is expected


# --------------------------------------------------------------------------------------------
# Record validation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: FileChange("a.py", h("a0"), h("a0")), id="before-equals-after"),
        pytest.param(lambda: FileChange("a.py", None, None), id="absent-to-absent"),
        pytest.param(lambda: FileChange("/abs/a.py", None, h("a0")), id="absolute-path"),
        pytest.param(lambda: FileChange("./a.py", None, h("a0")), id="unnormalised-path"),
        pytest.param(lambda: FileChange("../a.py", None, h("a0")), id="escaping-path"),
        pytest.param(lambda: TurnChanges(-1, ()), id="negative-turn"),
        pytest.param(
            lambda: TurnChanges(
                0, (FileChange("a.py", None, h("a0")), FileChange("a.py", h("a0"), h("a1")))
            ),
            id="duplicate-path-in-turn",
        ),
        pytest.param(lambda: EditBlock(0, (1, 3), ("a.py",), True, ()), id="gap-in-block"),
        pytest.param(lambda: EditBlock(0, (1,), ("a.py",), True, ("x",)), id="eligible-reasons"),
        pytest.param(lambda: EditBlock(0, (1,), ("b.py", "a.py"), True), id="unsorted-paths"),
    ],
)
def test_invalid_records_rejected(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize(
    "turns",
    [
        pytest.param(episode({"a.py": ("a0", "a1")}, {"a.py": ("a0", "a2")}), id="broken-chain"),
        pytest.param(
            episode({"a.py": ("a0", None)}, None, {"a.py": ("a1", "a2")}), id="broken-after-delete"
        ),
        pytest.param(
            [TurnChanges.from_mapping(1, {}), TurnChanges.from_mapping(0, {})], id="out-of-order"
        ),
        pytest.param(
            [TurnChanges.from_mapping(0, {}), TurnChanges.from_mapping(0, {})], id="duplicate-turn"
        ),
    ],
)
def test_inconsistent_history_rejected(turns):
    with pytest.raises(ValueError):
        edit_blocks(turns, is_default_test_path)


def test_records_to_dict_are_json_ready():
    turns = episode({"a.py": (None, "a1")}, {"a.py": ("a1", "a2")})
    (block,) = edit_blocks(turns, is_default_test_path)
    assert turns[0].to_dict() == {
        "turn": 0,
        "changes": [{"path": "a.py", "before": None, "after": h("a1")}],
    }
    assert block.to_dict() == {
        "index": 0,
        "turns": [0, 1],
        "paths": ["a.py"],
        "eligible": True,
        "reasons": [],
    }
    json.dumps([t.to_dict() for t in turns] + [block.to_dict()])


# --------------------------------------------------------------------------------------------
# Score-blind selection
# --------------------------------------------------------------------------------------------

# Six one-turn blocks (indices 0..5) separated by idle turns; block 5 touches a test path.
SELECTION_TURNS = episode(
    *(t for i in range(5) for t in ({f"f{i}.py": (f"f{i}a", f"f{i}b")}, None)),
    {"tests/test_f.py": ("ta", "tb")},
)
SELECTION_BLOCKS = edit_blocks(SELECTION_TURNS, is_default_test_path)


def independent_choice(blocks: list[EditBlock], key: str) -> int | None:
    digests = {
        b.index: hashlib.sha256(f"{key}:{b.index}".encode()).hexdigest()
        for b in blocks
        if b.eligible
    }
    return min(digests, key=digests.get) if digests else None


@pytest.mark.parametrize(
    "rollout_key,expected_index",
    [
        # Hard-coded once from sha256; block 5 has the smallest hash for sample-1 but is
        # ineligible, so the next smallest (3) is chosen.
        pytest.param("run-a/step-3/task-x/sample-0", 2, id="sample-0"),
        pytest.param("run-a/step-3/task-x/sample-1", 3, id="sample-1"),
    ],
)
def test_selection_is_stable(rollout_key, expected_index):
    assert [b.eligible for b in SELECTION_BLOCKS] == [True] * 5 + [False]
    chosen = select_block(SELECTION_BLOCKS, rollout_key)
    assert chosen is not None and chosen.index == expected_index
    assert chosen.index == independent_choice(SELECTION_BLOCKS, rollout_key)
    assert (
        selection_hash(rollout_key, chosen.index)
        == hashlib.sha256(f"{rollout_key}:{expected_index}".encode()).hexdigest()
    )
    # Same answer on repeated calls and whatever the order of the blocks.
    assert select_block(list(reversed(SELECTION_BLOCKS)), rollout_key) == chosen
    assert select_block(SELECTION_BLOCKS, rollout_key) == chosen


def test_smallest_hash_ineligible_block_is_skipped():
    key = "run-a/step-3/task-x/sample-1"
    all_digests = {b.index: selection_hash(key, b.index) for b in SELECTION_BLOCKS}
    assert min(all_digests, key=all_digests.get) == 5
    assert select_block(SELECTION_BLOCKS, key).index != 5


def test_selection_takes_no_grade():
    assert list(inspect.signature(select_block).parameters) == ["blocks", "rollout_key"]


@pytest.mark.parametrize(
    "blocks",
    [
        pytest.param([], id="no-blocks"),
        pytest.param(
            edit_blocks(episode({"tests/test_a.py": ("t0", "t1")}), is_default_test_path),
            id="only-test-path-block",
        ),
        pytest.param(
            edit_blocks(
                episode({"a.py": ("a0", "a1")}, {"a.py": ("a1", "a0")}), is_default_test_path
            ),
            id="only-no-net-effect-block",
        ),
    ],
)
def test_select_none_when_nothing_eligible(blocks):
    assert select_block(blocks, "run-a/step-0/task-y/sample-0") is None


def test_select_rejects_empty_key():
    with pytest.raises(ValueError):
        select_block(SELECTION_BLOCKS, "")


# --------------------------------------------------------------------------------------------
# Counterfactual tree
# --------------------------------------------------------------------------------------------

# Initial tree: a.py=a0, b.py=b0, old.py=o0, keep.py=k0 (never touched), new.py absent.
CF_TURNS = episode(
    {"b.py": ("b0", "b1")},  # block 0
    None,
    {"a.py": ("a0", "a1"), "new.py": (None, "n1"), "old.py": ("o0", None)},  # block 1
    {"a.py": ("a1", "a2")},  # block 1
    None,
)
CF_FINAL = {"a.py": text("a2"), "b.py": text("b1"), "keep.py": text("k0"), "new.py": text("n1")}
CF_STORE = {h(v): text(v) for v in ["a0", "a1", "a2", "b0", "b1", "k0", "n1", "o0"]}
CF_BLOCKS = edit_blocks(CF_TURNS, is_default_test_path)


@pytest.mark.parametrize(
    "index,turns,state_before,expected",
    [
        pytest.param(
            0,
            (0,),
            {"b.py": h("b0")},
            {"a.py": text("a2"), "b.py": text("b0"), "keep.py": text("k0"), "new.py": text("n1")},
            id="modified-file-restored",
        ),
        pytest.param(
            1,
            (2, 3),
            {"a.py": h("a0"), "new.py": None, "old.py": h("o0")},
            {"a.py": text("a0"), "b.py": text("b1"), "keep.py": text("k0"), "old.py": text("o0")},
            id="created-removed-deleted-restored",
        ),
    ],
)
def test_counterfactual_tree(index, turns, state_before, expected):
    block = CF_BLOCKS[index]
    assert block.eligible
    assert credited_turns(block) == turns
    assert block_state_before(block, CF_TURNS) == state_before
    final = dict(CF_FINAL)
    tree = counterfactual_tree(final, block, CF_TURNS, CF_STORE)
    assert tree == expected
    assert final == CF_FINAL  # the input is not modified
    # Exactly the block's paths change; every other path is byte-identical to the final tree.
    changed = {p for p in set(tree) | set(final) if tree.get(p) != final.get(p)}
    assert changed == set(block.paths)
    for path in set(final) - set(block.paths):
        assert tree[path].encode() == final[path].encode()


def test_counterfactual_missing_version_raises_key_error():
    store = {k: v for k, v in CF_STORE.items() if k != h("o0")}
    with pytest.raises(KeyError, match=h("o0")):
        counterfactual_tree(CF_FINAL, CF_BLOCKS[1], CF_TURNS, store)


def test_counterfactual_refuses_ineligible_block():
    turns = episode({"a.py": ("a0", "a1")}, None, {"a.py": ("a1", "a2")})
    blocks = edit_blocks(turns, is_default_test_path)
    with pytest.raises(ValueError, match="not eligible"):
        counterfactual_tree({"a.py": text("a2")}, blocks[0], turns, {h("a0"): text("a0")})


def test_block_state_before_rejects_foreign_block():
    foreign = EditBlock(index=0, turns=(7,), paths=("z.py",), eligible=True)
    with pytest.raises(ValueError):
        block_state_before(foreign, CF_TURNS)
