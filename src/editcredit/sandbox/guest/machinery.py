"""Is pytest's reporting machinery still the one the observer started with?

Runs inside the test process, which also runs the patch's code, so the observer cannot simply
trust ``report.outcome``. It snapshots, before any task code is imported, the objects through
which an outcome travels from a test function to the observer's record: the report class and
its constructors, the runner's protocol functions, the function-call path, pluggy's hook
calling and the JSON encoder the observer uses (its raw write is captured at import). The
standard library in general is not guarded: tests legitimately monkeypatch it. After
configuration it snapshots every hook implementation on the reporting hooks (none may be
removed or swapped; one added from a file the patch changed is refused), after collection each
test item's function; :func:`changes` lists what differs.

Standard library and pytest only (mounted into the sandbox; never imports editcredit).
"""

import contextlib
import os
import sys
import types

#: (module, attribute path) of every guarded object; a missing one (another pytest version)
#: is recorded as absent and must stay absent.
GUARDED = (
    ("_pytest.reports", "TestReport"),
    ("_pytest.reports", "TestReport.from_item_and_call"),
    ("_pytest.reports", "TestReport.__init__"),
    ("_pytest.reports", "TestReport.__new__"),
    ("_pytest.reports", "TestReport.__setattr__"),
    ("_pytest.reports", "TestReport.__getattribute__"),
    ("_pytest.reports", "BaseReport.passed"),
    ("_pytest.reports", "BaseReport.failed"),
    ("_pytest.reports", "BaseReport.skipped"),
    ("_pytest.reports", "CollectReport"),
    ("_pytest.runner", "TestReport"),
    ("_pytest.runner", "call_and_report"),
    ("_pytest.runner", "runtestprotocol"),
    ("_pytest.runner", "call_runtest_hook"),
    ("_pytest.runner", "pytest_runtest_protocol"),
    ("_pytest.runner", "pytest_runtest_makereport"),
    ("_pytest.runner", "pytest_runtest_call"),
    ("_pytest.runner", "pytest_runtest_setup"),
    ("_pytest.runner", "pytest_runtest_teardown"),
    ("_pytest.runner", "check_interactive_exception"),
    ("_pytest.runner", "CallInfo"),
    ("_pytest.runner", "CallInfo.from_call"),
    ("_pytest.runner", "CallInfo.__init__"),
    ("_pytest.runner", "SetupState.setup"),
    ("_pytest.runner", "SetupState.teardown_exact"),
    ("_pytest.skipping", "pytest_runtest_makereport"),
    ("_pytest.skipping", "pytest_runtest_call"),
    ("_pytest.skipping", "pytest_runtest_setup"),
    ("_pytest.python", "Function"),
    ("_pytest.python", "Function.runtest"),
    ("_pytest.python", "Function.setup"),
    ("_pytest.python", "pytest_pyfunc_call"),
    ("_pytest.main", "pytest_runtestloop"),
    ("_pytest.main", "Session.gethookproxy"),
    ("_pytest.main", "FSHookProxy.__getattr__"),
    ("_pytest.nodes", "Node.ihook"),
    ("_pytest.outcomes", "fail"),
    ("_pytest.outcomes", "skip"),
    ("_pytest.outcomes", "Skipped"),
    ("_pytest.outcomes", "Failed"),
    ("pluggy._hooks", "HookCaller.__call__"),
    ("pluggy._hooks", "_HookCaller.__call__"),
    ("pluggy._hooks", "_SubsetHookCaller"),
    ("pluggy._manager", "PluginManager._hookexec"),
    ("pluggy._manager", "PluginManager.subset_hook_caller"),
    ("pluggy._callers", "_multicall"),
    ("pluggy._result", "_Result.get_result"),
    ("pluggy._result", "Result.get_result"),
    ("pluggy._result", "_Result.force_result"),
    ("pluggy._result", "Result.force_result"),
    ("json.encoder", "JSONEncoder.encode"),
    ("json.encoder", "JSONEncoder.iterencode"),
    ("json.encoder", "c_make_encoder"),
    ("json.encoder", "encode_basestring_ascii"),
    ("json.encoder", "encode_basestring"),
)

#: Hooks through which a report is made, logged or a test is called.
GUARDED_HOOKS = (
    "pytest_runtest_protocol",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_runtest_teardown",
    "pytest_pyfunc_call",
    "pytest_runtestloop",
    "pytest_report_teststatus",
    "pytest_runtest_logstart",
    "pytest_runtest_logfinish",
    "pytest_sessionfinish",
)

_ABSENT = object()


def _resolve(module: str, path: str):
    """The raw object (class ``__dict__`` entry, not a bound or descriptor result)."""
    obj = sys.modules.get(module)
    if obj is None:
        return _ABSENT
    for name in path.split("."):
        space = getattr(obj, "__dict__", None)
        if isinstance(obj, type):
            for klass in obj.__mro__:
                if name in klass.__dict__:
                    obj = klass.__dict__[name]
                    break
            else:
                return _ABSENT
        elif space is not None and name in space:
            obj = space[name]
        else:
            return _ABSENT
    return obj


def _code_of(obj):
    if type(obj) is types.FunctionType:  # the common cases, without failing lookups
        return obj.__code__
    if type(obj) is types.MethodType:  # its function (a read-only slot), unless that has an
        func = obj.__func__  # ``fget`` of its own (which the lookups below would follow)
        if type(func) is types.FunctionType and "fget" not in func.__dict__:
            return func.__code__
    if obj is _ABSENT or isinstance(obj, type):
        return None
    func = getattr(obj, "__func__", obj)
    func = getattr(func, "fget", func)
    return getattr(func, "__code__", None)


def snapshot() -> dict:
    """Identities (and code objects) of every guarded object, before any task code runs."""
    import json.encoder  # noqa: F401 - guarded

    import _pytest.main  # noqa: F401
    import _pytest.nodes  # noqa: F401
    import _pytest.outcomes  # noqa: F401
    import _pytest.python  # noqa: F401
    import _pytest.reports  # noqa: F401
    import _pytest.runner  # noqa: F401
    import _pytest.skipping  # noqa: F401
    import pluggy  # noqa: F401

    for name in ("pluggy._hooks", "pluggy._manager", "pluggy._callers", "pluggy._result"):
        with contextlib.suppress(ImportError):
            __import__(name)
    out = {}
    for module, path in GUARDED:
        obj = _resolve(module, path)
        out[f"{module}:{path}"] = (obj, _code_of(obj))
    return out


def snapshot_of(guarded, modules=()) -> dict:
    """Identities (and code objects) of ``guarded`` (module, attribute path) pairs, after
    importing ``modules``: the non-pytest runners' hooks guard unittest's machinery this way."""
    for name in modules:
        with contextlib.suppress(ImportError):
            __import__(name)
    out = {}
    for module, path in guarded:
        obj = _resolve(module, path)
        out[f"{module}:{path}"] = (obj, _code_of(obj))
    return out


#: id(snapshot) -> (the snapshot, its plan): each key parsed once into (key, module, attribute
#: names, object, code). A snapshot is never changed once taken; the entry holds it, so its id
#: is not reused while the entry lives.
_PLANS: dict = {}
_FUNCTION = types.FunctionType


def _plan(before: dict) -> tuple:
    entry = _PLANS.get(id(before))
    if entry is None or entry[0] is not before:
        plan = []
        for key, (obj, code) in before.items():
            module, path = key.split(":", 1)
            plan.append((key, module, tuple(path.split(".")), obj, code))
        entry = _PLANS[id(before)] = (before, tuple(plan))
    return entry[1]


def changes(before: dict, extra: "dict | None" = None) -> "list[str]":
    """Guarded names whose object (or its code) is no longer the one snapshotted.

    Each object is resolved as :func:`_resolve` does and its code read as :func:`_code_of`
    does: this runs at every phase report of every test. Once a check has found nothing
    changed, the places it read are kept as a :class:`_Probe`; while every one of them still
    holds the object it held, the answer is the same and only the keys the probe cannot
    cover are resolved again (any difference: every key is resolved as before)."""
    plan = _plan(before)
    entry = _PROBES.get((id(before), id(extra)))
    if entry is not None and entry[0] is before and entry[1] is extra and entry[2].holds():
        return _changes(entry[2].slow, None)
    out = _changes(plan, extra)
    if not out:
        probe = _Probe.of(plan, extra)
        if probe is not None:
            _PROBES[(id(before), id(extra))] = (before, extra, probe)
    return out


def _changes(plan: tuple, extra: "dict | None") -> "list[str]":
    out = []
    modules = sys.modules
    for key, module, names, obj, code in plan:
        now = modules.get(module)
        if now is None:
            now = _ABSENT
        for name in names:
            if now is _ABSENT:
                break
            if isinstance(now, type):
                for klass in now.__mro__:
                    space = klass.__dict__
                    if name in space:
                        now = space[name]
                        break
                else:
                    now = _ABSENT
            else:
                space = getattr(now, "__dict__", None)
                now = space[name] if space is not None and name in space else _ABSENT
        if now is not obj:
            out.append(key)
        elif type(now) is _FUNCTION:
            if now.__code__ is not code:
                out.append(key)
        elif _code_of(now) is not code:
            out.append(key)
    for key, (obj, code) in (extra or {}).items():
        if _code_of(obj) is not code:
            out.append(key)
    return out


#: (id(snapshot), id(extra)) -> (the snapshot, the extra entries, their :class:`_Probe`); the
#: entry holds both, so their ids are not reused while it lives.
_PROBES: dict = {}
_operator = __import__("operator")
_call = getattr(_operator, "call", None) or (lambda f, *a: f(*a))  # operator.call: 3.11+
_is = _operator.is_
_repeat = __import__("itertools").repeat
_MRO = type.__dict__["__mro__"].__get__  # a type's own slot: no metaclass code runs
_FUNCTION_CODE = _FUNCTION.__dict__["__code__"].__get__
_WRAPPERS = (classmethod, staticmethod)


class _Probe:
    """The places a check that found nothing changed read, each with what it held then.

    Built from the current state right after :func:`_changes` found every guarded object to
    be the snapshot's, by walking each key as :func:`_changes` does: the ``sys.modules``
    entry, the module's dict entry, the class's ``__mro__`` and each class dict up to the one
    holding the name, and the code of the function found (or of the function a property,
    classmethod or staticmethod holds). Objects are held, not their ids. Only plain modules
    (``types.ModuleType``) and classes whose metaclass is ``type`` are walked this way: their
    ``__dict__`` and ``__mro__`` are the interpreter's own slots, fixed for the object's life,
    and their type is checked too. A key through anything else (a metaclass of Python code,
    an object of another kind) stays in :attr:`slow`, resolved at every check. :meth:`holds`
    compares every place by identity at C speed; where it says so, :func:`_changes` would
    find what it found when the probe was built: nothing changed, but for the slow keys."""

    __slots__ = (
        "typed",
        "types",
        "classes",
        "mros",
        "reads",
        "names",
        "held",
        "coded",
        "codes",
        "extra",
        "extra_values",
        "slow",
    )

    @classmethod
    def of(cls, plan: tuple, extra: "dict | None") -> "_Probe | None":
        typed, types_, classes, mros, reads, names, held = [], [], [], [], [], [], []
        coded, codes, slow = [], [], []
        modules = sys.modules

        seen: dict = {}  # each place read once: (id of its owner, name) or id of its object

        def read(owner, space, name):
            value = space.get(name, _ABSENT)
            if (id(owner), name) not in seen:
                seen[id(owner), name] = owner
                reads.append(space.get)
                names.append(name)
                held.append(value)
            return value

        def of_module(module) -> None:
            if id(module) not in seen:
                seen[id(module)] = module
                typed.append(module)
                types_.append(types.ModuleType)

        def of_class(klass) -> bool:
            """Probes that ``klass.__mro__`` and ``klass.__dict__`` read the type's own slots:
            its metaclass, and that no class of the metaclass's MRO but ``type`` and
            ``object`` defines an attribute hook; False where one does (walk it slowly)."""
            if id(klass) in seen:
                return seen[id(klass), "plain"]
            seen[id(klass)] = klass
            meta = type(klass)
            typed.append(klass)
            types_.append(meta)
            classes.append(klass)
            mros.append(klass.__mro__)
            plain = meta is type or (
                of_class(meta)
                and all(
                    read(m, m.__dict__, hook) is _ABSENT
                    for m in meta.__mro__
                    if m is not type and m is not object
                    for hook in ATTRIBUTE_HOOKS
                )
            )
            seen[id(klass), "plain"] = plain
            return plain

        read(sys, sys.__dict__, "modules")
        for entry in plan:
            _key, module, path, obj, _code = entry
            now = read(modules, modules, module)
            walked = True
            for name in path:
                if now is _ABSENT:
                    break
                if isinstance(now, type):  # a class: its MRO, then its classes' dicts
                    if not (of_class(now) and all(map(of_class, now.__mro__))):
                        walked = False
                        break
                    found = _ABSENT
                    for klass in now.__mro__:
                        found = read(klass, klass.__dict__, name)
                        if found is not _ABSENT:
                            break
                    now = found
                elif type(now) is types.ModuleType:
                    of_module(now)
                    now = read(now, now.__dict__, name)
                else:
                    walked = False
                    break
            if not walked:
                slow.append(entry)
                continue
            if now is not obj:
                return None  # not the snapshot's state: no probe
            func = now.__func__ if type(now) in _WRAPPERS else now
            func = func.fget if type(func) is property else func
            if type(func) is _FUNCTION:
                coded.append(func)
                codes.append(func.__code__)
            elif not (now is _ABSENT or isinstance(now, type) or type(now) in _NO_CODE):
                slow.append(entry)  # another kind of object: its code is read as before
        for obj, code in (extra or {}).values():
            if type(obj) is not _FUNCTION:
                return None
            coded.append(obj)
            codes.append(code)
        self = cls()
        self.typed, self.types = tuple(typed), tuple(types_)
        self.classes, self.mros = tuple(classes), tuple(mros)
        self.reads, self.names, self.held = tuple(reads), tuple(names), tuple(held)
        self.coded, self.codes, self.slow = tuple(coded), tuple(codes), tuple(slow)
        self.extra = extra
        self.extra_values = tuple((extra or {}).values())
        return self

    def holds(self) -> bool:
        """Does every place still hold what it held (compared by identity, never ``==``)?"""
        extra = self.extra or {}
        return (
            all(map(_is, map(type, self.typed), self.types))
            and all(map(_is, map(_MRO, self.classes), self.mros))
            and all(map(_is, map(_call, self.reads, self.names, _repeat(_ABSENT)), self.held))
            and all(map(_is, map(_FUNCTION_CODE, self.coded), self.codes))
            and len(extra) == len(self.extra_values)
            and all(map(_is, extra.values(), self.extra_values))
        )


#: Objects with no code of their own whose type lets nothing be set on them (``_code_of`` is
#: None for them, always).
_NO_CODE = (
    types.BuiltinFunctionType,
    type(object.__init__),  # a slot wrapper (types.WrapperDescriptorType: 3.7+)
    type(object().__str__),  # a method-wrapper
    type(str.join),  # a method descriptor
    type(dict.__dict__["fromkeys"]),  # a classmethod descriptor
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
)
#: What a metaclass could define to answer ``klass.__mro__`` or ``klass.__dict__`` itself.
ATTRIBUTE_HOOKS = ("__getattribute__", "__mro__", "__dict__")


def tracing(patched: "frozenset[str]") -> "list[str]":
    """A trace or profile function can rewrite the locals of pytest's report construction
    without replacing any object: none from a file the patch changed (or from no file) may
    be set while tests are reported (a test suite's own tracer, or coverage's, may)."""
    out = []
    for name, func in (("sys.settrace", sys.gettrace()), ("sys.setprofile", sys.getprofile())):
        if func is None:
            continue
        code = _code_of(func) or _code_of(type(func).__dict__.get("__call__"))
        if code is None:  # a tracer in C (coverage's): no Python of the patch's
            continue
        filename = code.co_filename or ""
        if not os.path.isabs(filename) or _in(filename, patched):
            out.append(f"{name} from {filename or '?'}")
    return out


def hook_impls(config) -> dict:
    """For each guarded hook, the (plugin, function, code) of every implementation."""
    pm = config.pluginmanager
    out = {}
    for name in GUARDED_HOOKS:
        caller = getattr(pm.hook, name, None)
        impls = caller.get_hookimpls() if caller is not None else []
        out[name] = (
            caller,
            tuple((id(i.plugin), i.function, _code_of(i.function)) for i in impls),
        )
    return out


def manager_changes(config, before: dict) -> "list[str]":
    """The plugin manager still calls hooks through pluggy's own call loop and callers."""
    pm = config.pluginmanager
    multicall = before.get("pluggy._callers:_multicall", (_ABSENT,))[0]
    out = []
    if multicall is not _ABSENT and pm.__dict__.get("_inner_hookexec") is not multicall:
        out.append("pluginmanager._inner_hookexec")
    out += [f"pluginmanager.{n}" for n in ("_hookexec", "subset_hook_caller") if n in pm.__dict__]
    if not type(pm.hook).__module__.startswith("pluggy"):
        out.append("pluginmanager.hook")
    for name in GUARDED_HOOKS:
        caller = getattr(pm.hook, name, None)
        if caller is not None and not type(caller).__module__.startswith("pluggy"):
            out.append(f"hook {name}: caller of type {type(caller).__name__}")
    return out


def hook_changes(before: dict, config, patched: "frozenset[str]") -> "list[str]":
    """Since configuration (before any task code): a hook caller replaced, an implementation
    removed or its function (or code) swapped, or one added from a file the patch changed.
    (An implementation added by the suite's own code, e.g. a test's plugin, is the task's.)

    The answer depends only on what is read from the hooks: each hook's caller, its
    implementations, their plugins, functions and code. A :class:`_HookProbe` keeps what the
    last full check read and its answer; while every read gives the same objects, the answer
    is the same (any difference: the full check again)."""
    hook = config.pluginmanager.hook
    key = (id(before), id(config), id(patched))
    entry = _HOOK_PROBES.get(key)
    if entry is not None and entry[0] is before and entry[1] is config and entry[2] is patched:
        found = entry[3].answer(hook) if entry[3] is not None else None
        if found is not None:
            return list(found)
    out = _hook_changes(before, hook, patched)
    _HOOK_PROBES[key] = (before, config, patched, _HookProbe.of(before, hook, out))
    return out


#: (id(snapshot), id(config), id(patched)) -> (them, their :class:`_HookProbe` or None)
_HOOK_PROBES: dict = {}
_GET_HOOKIMPLS = _operator.methodcaller("get_hookimpls")
_IMPL_FUNCTION = _operator.attrgetter("function")
_IMPL_PLUGIN = _operator.attrgetter("plugin")
_chain = __import__("itertools").chain.from_iterable


class _HookProbe:
    """What :func:`_hook_changes` read (the guarded hooks' callers, each caller's
    implementations in order, their plugins and functions, each function's code: its own,
    or a bound method's function's, whose ``fget`` lookup must still find nothing) and what
    it answered. :meth:`answer` reads the same places the same way (``getattr`` on the hook
    relay, the caller's ``get_hookimpls()``, the implementations' attributes) and compares
    by identity at C speed; None where anything differs."""

    __slots__ = (
        "names",
        "callers",
        "lengths",
        "impls",
        "functions",
        "plugins",
        "inner",
        "codes",
        "methods",
        "found",
    )

    @classmethod
    def of(cls, before: dict, hook, found: "list[str]") -> "_HookProbe | None":
        self = cls()
        self.names = tuple(before)
        self.callers = tuple(getattr(hook, name, None) for name in self.names)
        if any(caller is None for caller in self.callers):
            return None
        lists = [caller.get_hookimpls() for caller in self.callers]
        self.lengths = tuple(map(len, lists))
        self.impls = tuple(_chain(lists))
        self.functions = tuple(impl.function for impl in self.impls)
        self.plugins = tuple(impl.plugin for impl in self.impls)
        inner, methods = [], []
        for function in self.functions:
            if type(function) is types.MethodType and type(function.__func__) is _FUNCTION:
                methods.append(function.__func__)
                if "fget" in function.__func__.__dict__:
                    return None
                inner.append(function.__func__)
            elif type(function) is _FUNCTION:
                inner.append(function)
            else:
                return None
        self.inner, self.methods = tuple(inner), tuple(methods)
        self.codes = tuple(map(_FUNCTION_CODE, self.inner))
        self.found = tuple(found)
        return self

    def answer(self, hook) -> "tuple[str, ...] | None":
        n = len(self.names)
        callers = tuple(map(getattr, _repeat(hook, n), self.names, _repeat(None, n)))
        if not all(map(_is, callers, self.callers)):
            return None
        lists = tuple(map(_GET_HOOKIMPLS, callers))
        if tuple(map(len, lists)) != self.lengths:
            return None
        impls = tuple(_chain(lists))
        same = (
            all(map(_is, impls, self.impls))
            and all(map(_is, map(_IMPL_FUNCTION, impls), self.functions))
            and all(map(_is, map(_IMPL_PLUGIN, impls), self.plugins))
            and all(map(_is, map(_FUNCTION_CODE, self.inner), self.codes))
            and all(
                map(
                    _is,
                    map(getattr, self.methods, _repeat("fget"), _repeat(_ABSENT)),
                    _repeat(_ABSENT),
                )
            )
        )
        return self.found if same else None


def _hook_changes(before: dict, hook, patched: "frozenset[str]") -> "list[str]":
    out, foreign = [], []
    for name, (caller, impls) in before.items():
        cur_caller = getattr(hook, name, None)
        cur_impls = cur_caller.get_hookimpls() if cur_caller is not None else []
        if cur_caller is not caller:
            out.append(f"hook {name}: caller replaced")
            foreign += _foreign_hooks(name, tuple((0, i.function, 0) for i in cur_impls), patched)
            continue
        if len(cur_impls) == len(impls) and _all_same(cur_impls, impls):
            foreign += _foreign_of_snapshot(name, impls, patched)
            continue
        last = _LAST_JUDGED.get(name)
        if (
            last is not None
            and last[0] is impls
            and last[1] is patched
            and len(cur_impls) == len(last[2])
            and _all_same(cur_impls, last[2])
        ):
            removed, found = last[3], last[4]
        else:
            current = tuple((id(i.plugin), i.function, _code_of(i.function)) for i in cur_impls)
            ids = {(i[0], id(i[1]), id(i[2])) for i in current}
            removed = any((i[0], id(i[1]), id(i[2])) not in ids for i in impls)
            found = _foreign_hooks(name, current, patched)
            _LAST_JUDGED[name] = (impls, patched, current, removed, found)
        if removed:
            out.append(f"hook {name}: implementation removed or swapped")
        foreign += found
    out += [f for f in foreign if f not in out]
    return out


#: hook name -> (the snapshot's implementations, the patched set, the implementations last
#: judged against them, removed?, their foreign findings): implementations registered after
#: the snapshot (pytest's logging plugin registers in a late ``pytest_configure``; a suite's
#: conftest files during collection) are judged once, not at every check, while the same
#: plugins, functions and code stay (compared as :func:`_same_impl` compares with the
#: snapshot). The entry holds what it compares by identity, so no id is reused while it lives.
_LAST_JUDGED: dict = {}


def _all_same(impls, snaps: tuple) -> bool:
    """:func:`_same_impl` of each pair, inline (this runs at every check)."""
    # the lengths are equal (checked first); zip has no strict= before Python 3.10
    for impl, (plugin_id, snap_function, snap_code) in zip(impls, snaps):  # noqa: B905
        function = impl.function
        if function is not snap_function or id(impl.plugin) != plugin_id:
            return False
        code = function.__code__ if type(function) is _FUNCTION else _code_of(function)
        if code is not snap_code:
            return False
    return True


def _same_impl(impl, snap: tuple) -> bool:
    function = impl.function
    return function is snap[1] and id(impl.plugin) == snap[0] and _code_of(function) is snap[2]


def _foreign_hooks(name: str, impls: tuple, patched: "frozenset[str]") -> "list[str]":
    out = []
    for _plugin, function, _code in impls:
        found, filename = _foreign(function, patched)
        if found:
            out.append(f"hook {name}: implementation from {filename or '?'}")
    return out


#: (hook name, the snapshot's implementations, patched set) -> their foreign findings
_SNAPSHOT_FOREIGN: dict = {}


def _foreign_of_snapshot(name: str, impls: tuple, patched: "frozenset[str]") -> "list[str]":
    """The foreign findings of a hook's snapshotted implementations (unchanged since: the same
    functions and code), judged once."""
    key = (name, id(impls), id(patched))
    entry = _SNAPSHOT_FOREIGN.get(key)
    if entry is None or entry[0] is not impls or entry[1] is not patched:
        entry = _SNAPSHOT_FOREIGN[key] = (impls, patched, _foreign_hooks(name, impls, patched))
    return list(entry[2])


#: id(function) -> (function, its code, the patched set, foreign?, filename): a function is
#: judged again only when its code or the patched set is another (the entry holds the
#: function, so its id is not reused while the entry lives).
_JUDGED: dict = {}


def _foreign(function, patched: "frozenset[str]") -> "tuple[bool, str]":
    """Does ``function``'s code come from a file the patch changed, or from no file?"""
    code = _code_of(function)
    entry = _JUDGED.get(id(function))
    if entry is not None and entry[0] is function and entry[1] is code and entry[2] is patched:
        return entry[3], entry[4]
    filename = getattr(code, "co_filename", "") or ""
    found = not os.path.isabs(filename) or _in(filename, patched)
    _JUDGED[id(function)] = (function, code, patched, found, filename)
    return found, filename


def _filename(obj) -> str:
    code = _code_of(obj)
    return getattr(code, "co_filename", "") or ""


_REAL: "dict[str, str]" = {}


def _in(filename: str, patched: "frozenset[str]") -> bool:
    if not os.path.isabs(filename):
        return False
    real = _REAL.get(filename)
    if real is None:
        real = _REAL[filename] = os.path.realpath(filename)
    return real in patched


def foreign_hook_impls(config, patched: "frozenset[str]") -> "list[str]":
    """Reporting-hook implementations whose code comes from a file the patch changed (or
    from no file at all): a plugin registered by the code under test."""
    out = []
    for name in GUARDED_HOOKS:
        caller = getattr(config.pluginmanager.hook, name, None)
        for impl in caller.get_hookimpls() if caller is not None else []:
            found, filename = _foreign(impl.function, patched)
            if found:
                out.append(f"hook {name}: implementation from {filename or '?'}")
    return out


def foreign_test_functions(items, patched: "frozenset[str]") -> "list[str]":
    """Collected tests whose function's code comes from a file the patch changed (a test
    function swapped by the code under test during collection), or whose item carries its
    own ``runtest`` (or another of :data:`ITEM_METHODS`)."""
    out = []
    for item in items:
        obj = item.__dict__.get("_obj", None)
        filename = _filename(getattr(obj, "__func__", obj))
        if _in(filename, patched):
            out.append(f"test item {item.nodeid}: code from {filename}")
        own = [name for name in ITEM_METHODS if name in item.__dict__]
        if own:
            out.append(f"test item {item.nodeid}: own {', '.join(own)}")
    return out


#: Methods a test item must take from its class (an instance attribute would replace them).
ITEM_METHODS = ("runtest", "setup", "teardown", "reportinfo", "repr_failure")


def item_identity(item) -> tuple:
    """What makes a collected item run its own test: its class, no per-instance methods, the
    function object it calls and that function's code (the snapshot :func:`item_changes`
    compares with)."""
    func = _function(item.__dict__.get("_obj", None))  # a method is bound anew per test
    return (
        type(item),
        tuple(name for name in ITEM_METHODS if name in item.__dict__),
        func,
        getattr(func, "__code__", None),
    )


def item_changes(item, snap: tuple, patched: "frozenset[str]") -> "list[str]":
    """How ``item`` no longer runs the test it was collected with, attributed by origin.

    Its class, its per-instance methods and its function's code must be the collected ones.
    The function it calls may be cleared (pytest's ``TestCaseFunction.teardown`` sets ``_obj``
    to None; the next access resolves it anew from the test's own module or class) or wrapped
    by code the patch did not change (a plugin running a coroutine test, a conftest's wrapper,
    :func:`wrapper_of`); anything else installed in its place is a changed item."""
    kind, own, func, code = snap
    now = item_identity(item)
    if now[0] is not kind or now[1] != own:
        return [f"test item {item.nodeid}"]
    if func is not None and getattr(func, "__code__", None) is not code:
        return [f"test item {item.nodeid}: code replaced"]
    out = []
    current = now[2]
    replaced = current is not None and current is not func
    if replaced and (func is None or not wrapper_of(current, func, patched)):
        out.append(f"test item {item.nodeid}: function replaced from {origin(current) or '?'}")
    # where a cleared function is resolved from again: the test's module or class
    source = _source_of(item)
    if func is not None and source is not None and not wrapper_of(source, func, patched):
        out.append(f"test item {item.nodeid}: its module's function replaced")
    return out


def _source_of(item):
    """The attribute pytest resolves a cleared ``_obj`` from: ``originalname`` of the parent's
    module (its ``__dict__``) or class (along its MRO); None where there is none to read."""
    parent = getattr(item, "parent", None)  # a slot of pytest's Node
    name = item.__dict__.get("originalname") or getattr(item, "name", None)
    space = getattr(parent, "__dict__", None) if parent is not None else None
    holder = space.get("_obj") if type(space) is dict else None
    if holder is None or not isinstance(name, str):
        return None
    if type(holder) is types.ModuleType:
        return holder.__dict__.get(name)
    klass = holder if isinstance(holder, type) else type(holder)  # pytest < 7: an Instance
    for base in klass.__mro__:
        if name in base.__dict__:
            value = base.__dict__[name]
            # a static or class method test: the function pytest calls through it
            return value.__func__ if type(value) in (staticmethod, classmethod) else value
    return None


#: How deep :func:`wrapper_of` follows wrappers to the wrapped test.
WRAP_DEPTH = 6


def _stdlib_dirs() -> "tuple[str, ...]":
    import sysconfig

    out = []
    for key in ("stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            out.append(os.path.realpath(path) + os.sep)
    return tuple(dict.fromkeys(out))


_STDLIB = _stdlib_dirs()


def _function(obj):
    """A bound method's function, else ``obj`` (types compared exactly: no attribute of the
    object's own is read, so no code of its runs)."""
    return obj.__func__ if type(obj) is types.MethodType else obj


def origin(obj) -> str:
    """The file of the Python code that runs when ``obj`` is called: a function's, a bound
    method's function's, or the ``__call__`` function of its class ('' for code in C or a
    ``__call__`` that is not a plain function)."""
    func = _function(obj)
    if type(func) is not types.FunctionType:
        func = None
        for klass in type(obj).__mro__:
            if "__call__" in klass.__dict__:
                func = klass.__dict__["__call__"]
                break
        if type(func) is not types.FunctionType:
            return ""
    return func.__code__.co_filename or ""


def trusted_origin(filename: str, patched: "frozenset[str]") -> bool:
    """Code that may wrap a test: from a real file the patch did not change, outside the
    standard library (whose generic wrappers, such as ``contextlib.contextmanager``, can
    wrap a test without running it)."""
    if not filename or not os.path.isabs(filename) or _in(filename, patched):
        return False
    real = _REAL.get(filename) or os.path.realpath(filename)
    parts = real.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return True
    return not real.startswith(_STDLIB)


def _wrapped_by(obj) -> list:
    """What ``obj`` wraps: ``__wrapped__`` (``functools.wraps``), a bound method's function,
    the callables its closure holds, and for a callable object (asgiref's ``AsyncToSync`` keeps
    the method in ``self.awaitable``) the callables among its attributes (read from
    ``__dict__`` and cells: no code of theirs runs)."""
    out = []
    try:
        space = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        space = None
    if type(space) is dict and "__wrapped__" in space:
        out.append(space["__wrapped__"])
    if type(space) is dict and type(obj) not in (types.FunctionType, types.MethodType):
        out += [v for k, v in space.items() if k != "__wrapped__" and callable(v)]
    func = _function(obj)
    if func is not obj:
        out.append(func)
    closure = func.__closure__ if type(func) is types.FunctionType else None
    for cell in closure or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if callable(value):
            out.append(value)
    return out


def wrapper_of(obj, target, patched: "frozenset[str]") -> bool:
    """Is ``obj`` ``target`` (or a method bound to it), or a wrapper whose every layer down to
    ``target`` is code the patch did not change (:func:`trusted_origin`)?

    Django's ``SimpleTestCase`` replaces an ``async def`` test on the instance with
    ``async_to_sync(method)``; pytest-asyncio runs a coroutine test through a
    ``functools.wraps`` wrapper; a conftest may wrap tests. Code from a changed file, or with
    no file (a lambda compiled at run time, a C callable), is never accepted as a layer."""
    stack, seen = [(obj, 0)], set()
    while stack:
        node, depth = stack.pop()
        if _function(node) is target:
            return True
        if id(node) in seen or depth >= WRAP_DEPTH:
            continue
        seen.add(id(node))
        if not trusted_origin(origin(node), patched):
            continue
        stack.extend((child, depth + 1) for child in _wrapped_by(node))
    return False
