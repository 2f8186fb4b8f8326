"""The seed pool: small modules written for this project, each with its own test file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

POOL_DIR = Path(__file__).parent / "pool"


@dataclass(frozen=True)
class SeedModule:
    """One pool module: ``<name>.py`` and ``test_<name>.py``."""

    name: str
    source: str
    test_source: str

    @property
    def path(self) -> str:
        return f"{self.name}.py"

    @property
    def test_path(self) -> str:
        return f"test_{self.name}.py"


def load_pool(pool_dir: Path = POOL_DIR) -> list[SeedModule]:
    """Every module of the pool that has a test file, sorted by name."""
    modules = []
    for test in sorted(pool_dir.glob("test_*.py")):
        name = test.name.removeprefix("test_").removesuffix(".py")
        source = pool_dir / f"{name}.py"
        if not source.exists():
            raise FileNotFoundError(f"{test}: no module {source.name} beside it")
        modules.append(SeedModule(name, source.read_text("utf-8"), test.read_text("utf-8")))
    if not modules:
        raise FileNotFoundError(f"{pool_dir}: no test_*.py files")
    return modules
