"""The shared ``==``, hash and ``repr`` of trialbook's records, and :func:`frozen_record`'s ``__init__`` and
refusal of changes, behave as those ``dataclasses`` generates."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import trialbook
import trialbook._records
from trialbook._records import FrozenRecord, Record, _compiled_init, frozen_record

VALUES = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.tuples(st.integers(0, 2), st.text(max_size=2)),
)


def _declared(options: list[dict[str, Any]], frozen: bool, base: tuple[type, ...]) -> type:
    """A dataclass ``Twin`` with a field ``fN`` of ``field(**options[N])`` each, a record on ``base``."""
    names = [f"f{i}" for i in range(len(options))]
    body: dict[str, Any] = {"__annotations__": dict.fromkeys(names, "object")}
    body.update({name: field(**opts) for name, opts in zip(names, options, strict=True)})
    if base == (FrozenRecord,):
        return frozen_record(type("Twin", base, body))
    kwargs = {"eq": False, "repr": False} if base else {}
    return dataclass(frozen=frozen, **kwargs)(type("Twin", base, body))


OPTIONS = st.lists(
    st.fixed_dictionaries(
        {"compare": st.booleans(), "repr": st.booleans(), "hash": st.sampled_from([None, True, False])}
    ),
    max_size=4,
)


@given(frozen=st.booleans(), options=OPTIONS, data=st.data())
def test_equality_hash_and_repr_match_what_dataclasses_generates(
    frozen: bool, options: list[dict[str, Any]], data: st.DataObject
) -> None:
    mine = _declared(options, frozen, (FrozenRecord if frozen else Record,))
    theirs = _declared(options, frozen, ())
    assert mine.__qualname__ == theirs.__qualname__
    left = data.draw(st.lists(VALUES, min_size=len(options), max_size=len(options)))
    right = data.draw(
        st.one_of(st.just(left), st.lists(VALUES, min_size=len(options), max_size=len(options)))
    )
    a, b = mine(*left), mine(*right)
    x, y = theirs(*left), theirs(*right)
    assert (a == b) == (x == y)
    assert (a != b) == (x != y)
    assert a == a and x == x  # the same object: tuples compare identical items as equal, NaN included
    assert repr(a) == repr(x)
    assert (a == x) is False and a.__eq__(x) is NotImplemented  # another class is never equal
    if frozen:
        assert hash(a) == hash(x)
    else:
        with pytest.raises(TypeError, match="unhashable"):
            hash(a)
        with pytest.raises(TypeError, match="unhashable"):
            hash(x)


def test_a_record_inside_its_own_repr_shows_as_an_ellipsis() -> None:
    @dataclass(eq=False, repr=False)
    class Loop(Record):
        inner: list[object]

    @dataclass
    class Plain:
        inner: list[object]

    mine, theirs = Loop([]), Plain([])
    mine.inner.append(mine)
    theirs.inner.append(theirs)
    assert (
        repr(mine)
        == repr(theirs).replace("Plain", "Loop")
        == ("test_a_record_inside_its_own_repr_shows_as_an_ellipsis.<locals>.Loop(inner=[...])")
    )


def _record_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(trialbook.__path__, "trialbook."):
        if ".copilot" in info.name or info.name in ("trialbook.__main__", "trialbook._records"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (pygit2, the Copilot SDK) that is not installed
            continue
        found += [
            value
            for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, Record) and value.__module__ == module.__name__
        ]
    return found


def test_every_record_takes_the_shared_methods_instead_of_generating_its_own() -> None:
    """A record declared without ``eq=False, repr=False`` would be right but pay for generated methods."""
    classes = _record_classes()
    assert len(classes) > 40
    for cls in classes:
        assert dataclasses.is_dataclass(cls), cls
        base = FrozenRecord if issubclass(cls, FrozenRecord) else Record
        methods = ["__eq__", "__hash__", "__repr__"]
        if base is FrozenRecord and not any(dataclasses.is_dataclass(b) for b in cls.__mro__[1:]):
            methods += ["__setattr__", "__delattr__"]  # declared with @frozen_record, not @dataclass
        for method in methods:
            assert getattr(cls, method) is getattr(base, method), f"{cls.__qualname__}.{method} is generated"


# --- frozen_record: the same __init__ and the same refusal of changes as @dataclass(frozen=True) ---------

_NO_DEFAULT = object()

FIELD_SPECS = st.lists(
    st.fixed_dictionaries(
        {
            "default": st.sampled_from([_NO_DEFAULT, None, 0, "d"]),
            "factory": st.booleans(),
            "kw_only": st.booleans(),
            "init": st.booleans(),
        }
    ),
    max_size=5,
)


def _field_options(spec: dict[str, Any], index: int) -> dict[str, Any]:
    options: dict[str, Any] = {"kw_only": spec["kw_only"], "init": spec["init"]}
    if spec["factory"]:
        options["default_factory"] = lambda: [index]  # a fresh list each time: shared would be a bug
    elif spec["default"] is not _NO_DEFAULT:
        options["default"] = spec["default"]
    return options


def _twins(specs: list[dict[str, Any]], post_init: bool) -> tuple[type | TypeError, type | TypeError]:
    """The same fields as ``frozen_record`` and as ``dataclass(frozen=True)``, or the error declaring them."""
    made: list[type | TypeError] = []
    for decorate in (frozen_record, dataclass(frozen=True, eq=False, repr=False)):
        names = [f"f{i}" for i in range(len(specs))]
        body: dict[str, Any] = {"__annotations__": dict.fromkeys(names, "object")}
        body.update(
            {
                name: field(**_field_options(spec, i))
                for i, (name, spec) in enumerate(zip(names, specs, strict=True))
            }
        )
        if post_init:
            body["__post_init__"] = lambda self: object.__setattr__(self, "seen", sorted(vars(self)))
        try:
            made.append(decorate(type("Twin", (FrozenRecord,), body)))
        except TypeError as error:
            made.append(error)
    return made[0], made[1]


def _call(cls: type, args: Sequence[object], kwargs: Mapping[str, object]) -> object:
    try:
        return cls(*args, **kwargs)
    except TypeError as error:  # the message names the function differently, the kind of mistake alike
        return type(error)


def _call_compiled(cls: type, args: Sequence[object], kwargs: Mapping[str, object]) -> object:
    """What the ``__init__`` compiled once a class made :data:`COMPILE_AFTER` instances does."""
    made: object = object.__new__(cls)
    try:
        _compiled_init(cls)(made, *args, **kwargs)
    except TypeError as error:
        return type(error)
    return made


@given(specs=FIELD_SPECS, post_init=st.booleans(), data=st.data())
def test_a_frozen_record_is_constructed_as_a_frozen_dataclass_is(
    specs: list[dict[str, Any]], post_init: bool, data: st.DataObject
) -> None:
    mine, theirs = _twins(specs, post_init)
    if isinstance(theirs, TypeError):
        assert isinstance(mine, TypeError), "frozen_record accepted fields dataclass refuses"
        assert str(mine) == str(theirs)
        return
    assert isinstance(mine, type)
    assert [f.name for f in dataclasses.fields(mine)] == [f.name for f in dataclasses.fields(theirs)]
    names = [f"f{i}" for i in range(len(specs))]
    args = data.draw(st.lists(st.integers(0, 9), max_size=len(specs) + 1))
    kwargs = data.draw(
        st.dictionaries(
            st.sampled_from([*names, "extra"]) if names else st.just("extra"), st.integers(10, 19), max_size=3
        )
    )
    a, x = _call(mine, args, dict(kwargs)), _call(theirs, args, dict(kwargs))
    compiled = _call_compiled(mine, args, dict(kwargs))
    if isinstance(x, type):
        assert a is x and compiled is x
        return
    assert vars(a) == vars(x) == vars(compiled)
    assert list(vars(a)) == list(vars(compiled))  # the same fields, set in the same order
    for name in names:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(a, name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(a, name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.other = 1  # type: ignore[attr-defined]
    if all(spec["init"] for spec in specs):
        assert vars(dataclasses.replace(a)) == vars(dataclasses.replace(x))  # type: ignore[type-var]
    for make in (_call, _call_compiled):
        first, second = make(mine, [], {}), make(mine, [], {})
        if not isinstance(first, type):  # every field has a default: each instance has its own from a factory
            for spec, name in zip(specs, names, strict=True):
                if spec["factory"]:
                    assert getattr(first, name) == getattr(second, name)
                    assert getattr(first, name) is not getattr(second, name)


def test_a_record_compiles_its_init_after_its_first_instances_and_keeps_working() -> None:
    @frozen_record(kw_only=True)
    class Often(FrozenRecord):
        a: int
        b: list[int] = field(default_factory=list)

    placeholder = Often.__dict__["__init__"]
    made = [Often(a=i) for i in range(trialbook._records.COMPILE_AFTER + 3)]
    assert Often.__dict__["__init__"] is not placeholder
    assert Often.__dict__["__init__"].__qualname__.endswith("Often.__init__")
    assert [vars(m) for m in made] == [{"a": i, "b": []} for i in range(len(made))]
    assert len({id(m.b) for m in made}) == len(made)
    with pytest.raises(TypeError):
        Often(1)  # type: ignore[call-arg]


def test_a_subclass_made_after_its_base_compiled_its_init_gets_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The base's compiled ``__init__`` sits in the base's ``__dict__``; a subclass must not inherit it."""
    monkeypatch.setattr(trialbook._records, "COMPILE_AFTER", 0)

    @frozen_record
    class Base(FrozenRecord):
        a: int

    placeholder = Base.__dict__["__init__"]
    assert vars(Base(1)) == {"a": 1}
    assert Base.__dict__["__init__"] is not placeholder  # compiled on the first instance

    @frozen_record(kw_only=True)
    class Child(Base):
        b: str = "b"

    assert vars(Child(2, b="c")) == {"a": 2, "b": "c"}
    assert vars(Child(3)) == {"a": 3, "b": "b"}
    assert vars(Base(4)) == {"a": 4}
    with pytest.raises(TypeError):
        Base(5, b="x")  # type: ignore[call-arg]


@pytest.mark.parametrize("compile_after", [0, 64])
def test_a_subclass_with_its_own_init_keeps_it_when_it_constructs_the_base_first(
    compile_after: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trialbook._records, "COMPILE_AFTER", compile_after)

    @frozen_record
    class Base(FrozenRecord):
        a: int

    class Wrapper(Base):
        def __init__(self, text: str) -> None:
            super().__init__(len(text))

    assert vars(Wrapper("four")) == {"a": 4}
    assert vars(Wrapper("ab")) == {"a": 2}
    assert Wrapper.__dict__["__init__"].__qualname__.endswith("Wrapper.__init__")


def test_frozen_record_refuses_what_it_cannot_keep() -> None:
    with pytest.raises(TypeError, match="derives from FrozenRecord"):
        frozen_record(type("Loose", (), {"__annotations__": {"a": "int"}}))
    for method in ("__init__", "__setattr__", "__delattr__"):
        with pytest.raises(TypeError, match=f"cannot define {method}"):
            frozen_record(type("Own", (FrozenRecord,), {method: lambda self, *a: None}))


def test_a_frozen_dataclass_may_derive_from_a_frozen_record_as_from_any_frozen_dataclass() -> None:
    """Users subclass built-in records (an assertion, say) with ``@dataclass(frozen=True)``."""

    @frozen_record
    class Base(FrozenRecord):
        a: int

    @dataclass(frozen=True)
    class Theirs(Base):
        b: int = 2

    assert dataclasses.fields(Theirs)[0].name == "a" and vars(Theirs(1)) == {"a": 1, "b": 2}
    with pytest.raises(dataclasses.FrozenInstanceError):
        Theirs(1).a = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="non-frozen dataclass from a frozen one"):
        dataclass(type("Mutable", (Base,), {"__annotations__": {"c": "int"}}))


def test_field_names_the_compiled_init_uses_itself_are_fields_like_any_other() -> None:
    """``self`` and the names of defaults or factories must not be shadowed by a field of that name."""
    for compile_after in (64, 0):
        body = {
            "__annotations__": {"self": "int", "_FACTORY": "list[int]", "_d0": "int", "store": "int"},
            "self": field(default=1),
            "_FACTORY": field(default_factory=list),
            "_d0": field(default=7),
            "store": field(default=3),
        }
        mine = frozen_record(type("Names", (FrozenRecord,), dict(body)))
        theirs: type = dataclass(frozen=True)(type("Names", (), dict(body)))
        trialbook._records.COMPILE_AFTER, saved = compile_after, trialbook._records.COMPILE_AFTER
        try:
            for args, kwargs in (((), {}), ((5, [2], 8, 9), {}), ((), {"self": 4, "_FACTORY": [3]})):
                assert vars(mine(*args, **kwargs)) == vars(theirs(*args, **kwargs))
        finally:
            trialbook._records.COMPILE_AFTER = saved
    with pytest.raises(TypeError, match="cannot name"):
        frozen_record(type("Own", (FrozenRecord,), {"__annotations__": {"__trialbook_self__": "int"}}))


def test_a_mixin_that_allows_changes_does_not_unfreeze_a_record() -> None:
    class Tracked:
        def __setattr__(self, name: str, value: object) -> None:
            object.__setattr__(self, name, value)

    @frozen_record
    class Mixed(Tracked, FrozenRecord):
        a: int

    record = Mixed(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.a = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del record.a
    assert record.a == 1


def test_what_a_frozen_record_cannot_keep_is_refused_when_it_is_declared() -> None:
    class Setter:
        def __set_name__(self, owner: type, name: str) -> None:
            self.name = name

        def __get__(self, record: object, owner: type) -> object:
            return 0

        def __set__(self, record: object, value: object) -> None:
            raise AssertionError("never stored through")

    refused: dict[str, dict[str, Any]] = {
        "InitVar": {"__annotations__": {"a": dataclasses.InitVar[int]}},
        "__dict__": {"__annotations__": {"a": "int"}, "__slots__": ("a",)},
        "descriptor": {"__annotations__": {"a": "int"}, "a": Setter()},
        "cannot name": {"__annotations__": {"class": "int"}},
    }
    for message, body in refused.items():
        with pytest.raises(TypeError, match=message):
            frozen_record(type("Refused", (FrozenRecord,), body))


def test_argument_errors_read_as_pythons_own() -> None:
    @frozen_record
    class Two(FrozenRecord):
        a: int
        b: int = 0

    @dataclass(frozen=True)
    class Theirs:
        a: int
        b: int = 0

    for args, kwargs in (((), {}), ((1, 2, 3), {}), ((1,), {"a": 1}), ((), {"c": 1})):
        with pytest.raises(TypeError) as mine:
            Two(*args, **kwargs)
        with pytest.raises(TypeError) as theirs:
            Theirs(*args, **kwargs)
        shown = [str(error.value).split(".<locals>.")[-1] for error in (mine, theirs)]
        assert shown[0].replace("Two", "X") == shown[1].replace("Theirs", "X")
