"""The pytest plugins the image installs, as its own ``pytest`` would load them.

Standard library only (mounted into the sandbox; never imports editcredit). The test process
runs with ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` (METHOD §6), so pytest itself loads no entry
point; the observer registers the ``pytest11`` entry points found here instead, under their
entry-point names (a ``-p no:NAME`` of the repository's configuration still blocks one). Only
the image's own metadata counts: a distribution whose metadata directory holds a file the patch
changed or added (an edited ``entry_points.txt`` of a development install in the work tree, a
new ``*.dist-info``) contributes nothing, so a patch can never add a plugin. The rest of the
image is read-only and the work tree is the patched copy of the image's own, so the set is the
one the unpatched image has. An entry point whose module resolves to a file the patch wrote
(a module of the same name added to the work tree) is not registered either.
"""

import os
import sys
import types


def _metadata():
    try:
        import importlib.metadata as metadata
    except ImportError:  # Python < 3.8
        try:
            import importlib_metadata as metadata
        except ImportError:
            return None
    return metadata


def _touched(directory: str, patched: "frozenset[str]") -> bool:
    prefix = os.path.realpath(directory) + os.sep
    return any(p.startswith(prefix) for p in patched)


def entry_points(patched: "frozenset[str]") -> "list[tuple[str, object]]":
    """(name, entry point) of every ``pytest11`` entry point of the distributions on
    ``sys.path`` (the first distribution of a name wins, as in pluggy), less those of a
    distribution whose metadata the patch touched."""
    out, names = [], set()
    for where, eps in distributions():
        if where is not None and _touched(where, patched):
            continue
        for ep in eps:
            if ep.name not in names:
                names.add(ep.name)
                out.append((ep.name, ep))
    return out


#: tuple(sys.path) -> what :func:`distributions` found on it. The warm server fills it before
#: it forks a test process (:func:`prewarm`), so each grading does not read the metadata of
#: every installed distribution again: the image's are read-only, and the work tree is not on
#: the server's path.
_FOUND: dict = {}


def distributions() -> "list[tuple[str | None, list]]":
    """(metadata directory, ``pytest11`` entry points) of each distribution on ``sys.path``,
    the first of a name only, in the order ``importlib.metadata`` finds them."""
    key = tuple(sys.path)
    found = _FOUND.get(key)
    if found is None:
        found = _FOUND[key] = _scan()
    return found


def _scan() -> "list[tuple[str | None, list]]":
    metadata = _metadata()
    if metadata is None:
        return []
    out, dists = [], set()
    for dist in metadata.distributions():
        try:
            name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        except Exception:  # noqa: BLE001 - a broken metadata file is no plugin
            continue
        if name in dists:
            continue
        dists.add(name)
        where = getattr(dist, "_path", None)
        eps = [ep for ep in getattr(dist, "entry_points", ()) or () if ep.group == "pytest11"]
        out.append((None if where is None else str(where), eps))
    return out


def prewarm(path: "list[str]") -> None:
    """Find the distributions on ``path`` (a test process's ``sys.path``) in this process,
    which forks the test processes."""
    saved = sys.path[:]
    sys.path[:] = path
    try:
        distributions()
    finally:
        sys.path[:] = saved


def register(pluginmanager, patched: "frozenset[str]") -> "list[str]":
    """Load and register the image's plugins (as pluggy's ``load_setuptools_entrypoints``:
    a blocked or already registered name is skipped); the names registered."""
    done = []
    for name, ep in entry_points(patched):
        if pluginmanager.is_blocked(name) or pluginmanager.get_plugin(name) is not None:
            continue
        plugin = ep.load()
        if _from_patched(plugin, patched):  # the name resolved to a module the patch wrote
            continue
        pluginmanager.register(plugin, name=name)
        done.append(name)
    return done


def _from_patched(plugin, patched: "frozenset[str]") -> bool:
    module = sys.modules.get(getattr(plugin, "__module__", None) or "") or plugin
    filename = getattr(module, "__file__", None) if isinstance(module, types.ModuleType) else None
    return bool(filename) and os.path.realpath(filename) in patched
