"""The task record: SWE-bench field names plus what a self-contained task needs.

Fields named as in SWE-bench keep their meaning there: ``instance_id``, ``repo``,
``base_commit``, ``problem_statement``, ``patch`` (the gold fix), ``test_patch``,
``FAIL_TO_PASS`` and ``PASS_TO_PASS`` (test ids in the task's runner's naming: full pytest node
ids for ``pytest``, ``test_name (module.Class)`` for ``unittest`` and ``django``, function names
for ``sympy``). A task carries its base tree either inline (``files``: path -> text) or as a
docker ``image`` holding the repository at ``workdir``; exactly one of the two. ``test_runner``
and ``test_command`` say how its tests run (``docs/task-schema.md``). A task that plants
several bugs lists them in ``bugs`` (:class:`PlantedBug`: each bug's FAIL_TO_PASS ids and gold
hunk); the field is absent from a single-bug task's record, dump and identity.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from editcredit.io.hashing import sha256_text

#: Test runners a task may name; each has an observer in the sandbox's guest code.
RUNNERS = ("pytest", "unittest", "django", "sympy")
#: Fields left out of a task's identity while they hold their default (tasks frozen before
#: they existed keep their hashes).
DEFAULT_IDENTITY = {"test_runner": "pytest", "test_command": []}


class PlantedBug(BaseModel):
    """One of the bugs of a multi-bug task: where it is, the tests it alone fails and its fix."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    function: str = Field(min_length=1, description="The seed function the bug is planted in.")
    FAIL_TO_PASS: list[str] = Field(
        min_length=1, description="The task's FAIL_TO_PASS ids this bug alone makes fail."
    )
    patch: str = Field(min_length=1, description="The gold fix of this bug alone (unified diff).")
    statement_test: str = Field("", description="The FAIL_TO_PASS id its statement quotes.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Generator details.")


class Task(BaseModel):
    """One grading task. Immutable; its identity is the SHA256 of its canonical JSON."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_id: str = Field(
        min_length=1, description="Unique id, e.g. 'minibugs__textops__slugify__1a2b3c4d'."
    )
    repo: str = Field(min_length=1, description="Source repository or synthetic module name.")
    base_commit: str = Field("", description="Commit of the base tree (empty for inline trees).")
    problem_statement: str = Field(min_length=1, description="What is wrong, never the fix.")
    patch: str = Field(min_length=1, description="The gold fix as a unified diff.")
    test_patch: str = Field("", description="Diff that adds the tests, applied before grading.")
    test_runner: str = Field(
        "pytest",
        description="How the tests run and are observed: pytest | unittest | django | sympy.",
    )
    FAIL_TO_PASS: list[str] = Field(min_length=1, description="Node ids the fix must make pass.")
    PASS_TO_PASS: list[str] = Field(description="Node ids that must keep passing.")
    statement_test: str = Field(
        "",
        description="The FAIL_TO_PASS id the problem statement was drawn from: with "
        "PASS_TO_PASS, the only tests the agent's test action runs ('' = none: PASS_TO_PASS "
        "only). The other FAIL_TO_PASS ids are graded, never run for the agent.",
    )
    test_paths: list[str] = Field(min_length=1, description="Test files, restored and run.")
    files: dict[str, str] | None = Field(None, description="Inline base tree: path -> text.")
    image: str | None = Field(None, description="Docker image with the base tree at workdir.")
    workdir: str = Field("/testbed", description="Repository location inside `image`.")
    timeout_s: float = Field(30.0, gt=0, description="Wall-clock limit of one grading run.")
    suite: str = Field(min_length=1, description="Suite the task belongs to.")
    split: str = Field("", description="train, dev or holdout ('' before splitting).")
    meta: dict[str, Any] = Field(default_factory=dict, description="Generator details.")
    test_command: list[str] = Field(
        default_factory=list,
        description="The runner's command (argument vector, without test labels; [] = the "
        "runner's default); labels come from test_paths, or from the ids run for the agent.",
    )
    bugs: list[PlantedBug] | None = Field(
        None,
        description="Multi-bug tasks only: the planted bugs (2 or more, in different "
        "functions); their FAIL_TO_PASS lists partition the task's. None (absent from the "
        "record) for a single-bug task.",
    )

    @model_serializer(mode="wrap")
    def _without_absent_bugs(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if data.get("bugs", ()) is None:  # single-bug tasks keep their dumps and hashes
            del data["bugs"]
        return data

    @field_validator("test_runner")
    @classmethod
    def _known_runner(cls, runner: str) -> str:
        if runner not in RUNNERS:
            raise ValueError(f"unknown test runner {runner!r} (one of {', '.join(RUNNERS)})")
        return runner

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS")
    @classmethod
    def _unique_ids(cls, ids: list[str], info: ValidationInfo) -> list[str]:
        pytest_ids = info.data.get("test_runner", "pytest") == "pytest"
        for node_id in ids:
            if pytest_ids and "::" not in node_id:
                raise ValueError(f"not a full pytest node id (no '::'): {node_id!r}")
            if not node_id.strip() or "\n" in node_id:
                raise ValueError(f"not a test id: {node_id!r}")
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate node ids")
        return ids

    @field_validator("test_paths")
    @classmethod
    def _relative_paths(cls, paths: list[str]) -> list[str]:
        for path in paths:
            if not is_safe_relative_path(path):
                raise ValueError(f"test path must be relative and inside the tree: {path!r}")
        return paths

    @model_validator(mode="after")
    def _one_tree_source(self) -> Task:
        if (self.files is None) == (self.image is None):
            raise ValueError("exactly one of 'files' (inline tree) or 'image' must be given")
        if self.files is not None:
            for path in self.files:
                if not is_safe_relative_path(path):
                    raise ValueError(f"files: path must be relative and inside the tree: {path!r}")
            missing = [p for p in self.test_paths if p not in self.files and not self.test_patch]
            if missing:
                raise ValueError(f"test_paths not in files: {missing}")
        if self.statement_test and self.statement_test not in self.FAIL_TO_PASS:
            raise ValueError(f"statement_test {self.statement_test!r} is not in FAIL_TO_PASS")
        overlap = set(self.FAIL_TO_PASS) & set(self.PASS_TO_PASS)
        if overlap:
            raise ValueError(f"ids in both FAIL_TO_PASS and PASS_TO_PASS: {sorted(overlap)}")
        if self.bugs is not None:
            check_bugs(self.bugs, self.FAIL_TO_PASS)
        return self

    def visible_tests(self) -> list[str]:
        """What the agent's test action runs: the statement's test, then PASS_TO_PASS."""
        return (
            [self.statement_test, *self.PASS_TO_PASS]
            if self.statement_test
            else [*self.PASS_TO_PASS]
        )

    def hidden_tests(self) -> list[str]:
        """FAIL_TO_PASS ids that grade the task but are never run for the agent."""
        return [i for i in self.FAIL_TO_PASS if i != self.statement_test]

    def canonical_json(self) -> str:
        """Sorted keys, no whitespace, UTF-8 text: the bytes that identify the task."""
        data = self.model_dump(mode="json")
        for name, default in DEFAULT_IDENTITY.items():
            if data[name] == default:
                del data[name]
        return canonical_json(data)

    def sha256(self) -> str:
        return sha256_text(self.canonical_json())


def check_bugs(bugs: list[PlantedBug], fail_to_pass: list[str]) -> None:
    """The rules of a multi-bug record: 2 or more bugs in distinct functions whose
    FAIL_TO_PASS lists partition the task's (each id belongs to exactly one bug)."""
    if len(bugs) < 2:
        raise ValueError(f"bugs: a multi-bug task plants 2 or more bugs, got {len(bugs)}")
    functions = [b.function for b in bugs]
    if len(set(functions)) != len(functions):
        raise ValueError(f"bugs: two bugs in one function: {functions}")
    owned = [i for b in bugs for i in b.FAIL_TO_PASS]
    if len(set(owned)) != len(owned):
        raise ValueError("bugs: a FAIL_TO_PASS id belongs to two bugs")
    if set(owned) != set(fail_to_pass):
        raise ValueError("bugs: the bugs' FAIL_TO_PASS ids are not the task's FAIL_TO_PASS")
    for bug in bugs:
        if bug.statement_test and bug.statement_test not in bug.FAIL_TO_PASS:
            raise ValueError(f"bugs: statement_test {bug.statement_test!r} is not the bug's")


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def is_safe_relative_path(path: str) -> bool:
    """True for a normalised relative POSIX path that stays inside its root."""
    if not path or path.startswith("/") or "\\" in path or "\x00" in path:
        return False
    norm = posixpath.normpath(path)
    return norm == path and norm != "." and not norm.startswith("..")
