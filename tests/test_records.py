"""The shared ``==``, hash and ``repr`` of trialbook's records behave as those ``dataclasses`` generates."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import trialbook
from trialbook._records import FrozenRecord, Record

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
        base = FrozenRecord if cls.__dataclass_params__.frozen else Record  # type: ignore[attr-defined]
        assert issubclass(cls, base), f"{cls.__qualname__}: a frozen record is a FrozenRecord"
        for method in ("__eq__", "__hash__", "__repr__"):
            assert getattr(cls, method) is getattr(base, method), f"{cls.__qualname__}.{method} is generated"
