"""Equality, hashing and ``repr`` for trialbook's dataclasses, written once instead of generated per class.

On Python 3.11 ``dataclasses`` compiles every method it generates with an ``exec`` of its own. A one-trial
``trialbook eval`` defines some 75 dataclasses before its first trial, and their ``__eq__``, ``__hash__``
and ``__repr__`` were about half of that cost, though a run calls none of them (tests, ``==`` on outcomes
and error messages do). A class declared ``@frozen_record`` on :class:`FrozenRecord`, or
``@dataclass(eq=False, repr=False)`` on :class:`Record`, gets the three from here, with what
``dataclasses`` generates on Python 3.11 for the same fields:

- ``==`` compares the fields declared with ``compare=True`` as a tuple, only against an instance of the
  very same class (``NotImplemented`` otherwise);
- a frozen record hashes the tuple of its fields with ``hash=True``, or ``compare=True`` where ``hash`` is
  left ``None``; a mutable one is unhashable, as a dataclass with ``eq=True`` is;
- ``repr`` is ``Name(field=value, ...)`` over the fields with ``repr=True``, ``...`` for a record met again
  inside its own ``repr``.

A class that forgets ``eq=False, repr=False`` still gets ``dataclasses``' own methods, which behave the
same, so the mistake costs start-up time, never correctness (tests/test_records.py checks both).

A frozen record is declared with :func:`frozen_record` instead of ``@dataclass(frozen=True, ...)``.
``dataclasses`` compiles a ``__setattr__`` and a ``__delattr__`` for each frozen class (two more
``exec`` calls, more than its ``__init__`` costs) and an ``__init__`` that stores each field with
``object.__setattr__``. :func:`frozen_record` lets ``dataclasses`` work out the fields (so ``fields``,
``replace`` and ``is_dataclass`` behave as before), shares one ``__setattr__`` and ``__delattr__`` that
refuse every change, and stores the fields straight into the instance's ``__dict__``: by binding the
arguments by hand for a class's first instances, then through an ``__init__`` compiled for the class
(about three times faster to construct than ``dataclasses``' own) once it has made
:data:`COMPILE_AFTER` of them. A class a run constructs a few times never pays for compiling.
"""

from __future__ import annotations

import dataclasses
import keyword
import reprlib
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["FrozenRecord", "Record", "frozen_record"]

T = TypeVar("T", bound=type)

_INITVAR = getattr(dataclasses, "_FIELD_INITVAR", object())
"""How ``dataclasses`` marks an ``InitVar`` pseudo-field in ``__dataclass_fields__`` (3.8 to 3.14)."""


_Names = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]

_NAMES: dict[type, _Names] = {}
"""Each record class's field names, worked out on its first ``==``, hash or ``repr``."""


def _names(cls: type) -> _Names:
    """The fields ``cls`` compares, hashes and shows, in declaration order, chosen as ``dataclasses`` does."""
    names = _NAMES.get(cls)
    if names is None:
        declared = fields(cls)
        names = _NAMES[cls] = (
            tuple(f.name for f in declared if f.compare),
            tuple(f.name for f in declared if (f.compare if f.hash is None else f.hash)),
            tuple(f.name for f in declared if f.repr),
        )
    return names


def _values(record: object, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(getattr(record, name) for name in names)


class Record:
    """A mutable dataclass's ``==`` and ``repr`` (and no hash): ``@dataclass(eq=False, repr=False)``."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            names = _names(self.__class__)[0]
            return _values(self, names) == _values(other, names)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _names(self.__class__)[2])
        return f"{self.__class__.__qualname__}({shown})"


class FrozenRecord(Record):
    """A frozen dataclass's ``==``, hash, ``repr`` and refusal of changes (see :func:`frozen_record`)."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(_values(self, _names(self.__class__)[1]))

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


_FACTORY = object()
"""The default of an ``__init__`` argument whose field has a ``default_factory``: call the factory."""

_OWN = "__trialbook_"
"""The prefix of every name the compiled ``__init__`` uses besides its fields (no field may start so)."""


def _init_source(cls: type, declared: tuple[Field[Any], ...]) -> tuple[str, dict[str, Any]]:
    """The text of ``cls``'s ``__init__`` and the names it refers to, as ``dataclasses`` would define it.

    Arguments come in declaration order, keyword-only fields after a ``*``; a field with a
    ``default_factory`` defaults to :data:`_FACTORY` and gets a fresh value when left out; a field with
    ``init=False`` is set from its factory, and otherwise left to the class attribute holding its default.
    Every other name (the instance, its ``__dict__``, defaults and factories) starts with :data:`_OWN`,
    so no field shadows one.
    """
    factory_marker, me, store = f"{_OWN}factory__", f"{_OWN}self__", f"{_OWN}dict__"
    names: dict[str, Any] = {factory_marker: _FACTORY}
    positional: list[str] = []
    named: list[str] = []
    body: list[str] = []
    for index, f in enumerate(declared):
        default = f"{_OWN}d{index}__"
        if f.default is not MISSING:
            names[default] = f.default
        elif f.default_factory is not MISSING:
            names[default] = f.default_factory
        if f.init:
            if f.default is not MISSING:
                argument = f"{f.name}={default}"
            elif f.default_factory is not MISSING:
                argument = f"{f.name}={factory_marker}"
            else:
                argument = f.name
            (named if f.kw_only else positional).append(argument)
            if f.default_factory is not MISSING:
                body.append(
                    f"{store}[{f.name!r}] = {default}() if {f.name} is {factory_marker} else {f.name}"
                )
            else:
                body.append(f"{store}[{f.name!r}] = {f.name}")
        elif f.default_factory is not MISSING:
            body.append(f"{store}[{f.name!r}] = {default}()")
    if hasattr(cls, "__post_init__"):
        body.append(f"{me}.__post_init__()")
    arguments = ", ".join([me, "/", *positional, *(["*", *named] if named else [])])
    lines = "\n".join(f"    {line}" for line in [f"{store} = {me}.__dict__", *body])
    return f"def __init__({arguments}) -> None:\n{lines}\n", names


def _refuse_what_cannot_be_kept(cls: type) -> None:
    """Refuse, when the class is declared, what the shared guard or ``__dict__`` stores would get wrong.

    Also the field order ``dataclasses`` refuses, which it checks only when it writes an ``__init__``.
    """
    where = cls.__qualname__
    if "__slots__" in cls.__dict__:
        raise TypeError(f"{where}: a frozen record stores its fields in __dict__; remove __slots__")
    for f in cls.__dataclass_fields__.values():  # type: ignore[attr-defined]
        if getattr(f, "_field_type", None) is _INITVAR:
            raise TypeError(f"{where}: a frozen record takes no InitVar ({f.name}); use a field")
    for f in fields(cls):
        if not f.name.isidentifier() or keyword.iskeyword(f.name) or f.name.startswith(_OWN):
            raise TypeError(f"{where}: {f.name!r} cannot name a frozen record's field")
        held = next((klass.__dict__[f.name] for klass in cls.__mro__ if f.name in klass.__dict__), None)
        if hasattr(type(held), "__set__") or hasattr(type(held), "__delete__"):
            raise TypeError(f"{where}: field {f.name!r} is a descriptor, which a __dict__ store would skip")
    # what dataclasses refuses too: a positional field without a default after one with one
    seen_default = False
    for f in fields(cls):
        if not f.init or f.kw_only:
            continue
        if f.default is not MISSING or f.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _compiled_init(cls: type) -> Callable[..., None]:
    source, names = _init_source(cls, fields(cls))
    scope: dict[str, Any] = {}
    exec(source, names, scope)
    return _named(scope["__init__"], cls)


def _named(init: Callable[..., None], cls: type) -> Callable[..., None]:
    """``init`` named as ``cls``'s own ``__init__``, in tracebacks and ``TypeError`` messages."""
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


COMPILE_AFTER = 64
"""How many instances a frozen record binds its arguments for before it compiles its ``__init__``.

Compiling costs about as much as 150 bound calls, and most records are made a handful of times a
run (options, plans, one per check kind): they never pay for it, the ones made per trial or per
call soon do."""


class _Binding:
    """A frozen record's ``__init__`` done without compiling: the arguments bound by hand, as Python would."""

    __slots__ = ("accepted", "cls", "order", "positional", "post_init", "required")

    def __init__(self, cls: type) -> None:
        self.cls = cls
        declared = fields(cls)
        self.positional = tuple(f.name for f in declared if f.init and not f.kw_only)
        self.required = sum(
            1
            for f in declared
            if f.init and not f.kw_only and f.default is MISSING and f.default_factory is MISSING
        )
        self.accepted = frozenset(f.name for f in declared if f.init)
        # each field in declaration order: (name, takes an argument, default, factory)
        self.order = tuple(
            (f.name, f.init, f.default, f.default_factory)
            for f in declared
            if f.init or f.default_factory is not MISSING
        )
        self.post_init = hasattr(cls, "__post_init__")

    def __call__(self, record: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        name = f"{self.cls.__qualname__}.__init__()"
        if len(args) > len(self.positional):
            given, most, least = len(args) + 1, len(self.positional) + 1, self.required + 1
            takes = (
                f"from {least} to {most} positional arguments"
                if least < most
                else (f"{most} positional argument{'s' if most != 1 else ''}")
            )
            raise TypeError(f"{name} takes {takes} but {given} were given")
        values = dict(zip(self.positional, args, strict=False))
        for key, value in kwargs.items():
            if key not in self.accepted:
                raise TypeError(f"{name} got an unexpected keyword argument {key!r}")
            if key in values:
                raise TypeError(f"{name} got multiple values for argument {key!r}")
            values[key] = value
        store = record.__dict__
        for field_name, takes_argument, default, factory in self.order:
            if takes_argument and field_name in values:
                store[field_name] = values[field_name]
            elif default is not MISSING:
                store[field_name] = default
            elif factory is not MISSING:
                store[field_name] = factory()
            else:
                kind = "positional" if field_name in self.positional else "keyword-only"
                raise TypeError(f"{name} missing 1 required {kind} argument: {field_name!r}")
        if self.post_init:
            record.__post_init__()


def _first_init(cls: type) -> Callable[..., None]:
    """``cls``'s ``__init__`` for its first instances, binding by hand; then the compiled one takes over."""
    binding: _Binding | None = None
    made = 0

    def __init__(self: Any, /, *args: Any, **kwargs: Any) -> None:
        nonlocal binding, made
        made += 1
        if made > COMPILE_AFTER:
            init = cls.__dict__["__init__"]
            if init is __init__:
                init = _compiled_init(cls)
                type.__setattr__(cls, "__init__", init)
            init(self, *args, **kwargs)
            return
        if binding is None:
            binding = _Binding(cls)
        binding(self, args, kwargs)

    return _named(__init__, cls)


@overload
def frozen_record(cls: T, /) -> T: ...
@overload
def frozen_record(*, kw_only: bool = False) -> Callable[[T], T]: ...


@dataclass_transform(frozen_default=True, eq_default=False, field_specifiers=(field,))
def frozen_record(cls: T | None = None, /, *, kw_only: bool = False) -> T | Callable[[T], T]:
    """Make ``cls`` (a :class:`FrozenRecord`) a frozen dataclass without compiling per-class methods.

    ``@frozen_record`` stands for ``@dataclass(frozen=True, eq=False, repr=False)`` and
    ``@frozen_record(kw_only=True)`` for the same with ``kw_only=True``: the same fields, the same
    ``__init__`` arguments and the same refusal to change a field afterwards
    (:class:`dataclasses.FrozenInstanceError`), and ``__dataclass_params__.frozen`` is true, so a
    subclass may be declared ``@dataclass(frozen=True)`` as on any frozen dataclass. A frozen record
    deriving from another gets ``dataclasses``' own guard, which refuses the same changes.
    """

    def make(cls: T) -> T:
        if not issubclass(cls, FrozenRecord):
            raise TypeError(f"{cls.__qualname__}: a frozen record derives from FrozenRecord")
        for method in ("__init__", "__setattr__", "__delattr__"):
            if method in cls.__dict__:
                raise TypeError(f"{cls.__qualname__}: a frozen record cannot define {method}")
        # On a frozen dataclass base, dataclasses insists on frozen=True and generates the guard itself.
        on_dataclass = any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:])
        dataclass(init=False, eq=False, repr=False, frozen=on_dataclass, kw_only=kw_only)(cls)
        # frozen all the same, so dataclasses lets a @dataclass(frozen=True) subclass derive from it
        cls.__dataclass_params__.frozen = True  # type: ignore[attr-defined]
        _refuse_what_cannot_be_kept(cls)
        if not on_dataclass:  # on the class itself, as dataclasses puts it: a mixin's cannot come first
            type.__setattr__(cls, "__setattr__", FrozenRecord.__setattr__)
            type.__setattr__(cls, "__delattr__", FrozenRecord.__delattr__)
        type.__setattr__(cls, "__init__", _first_init(cls))
        return cls

    return make if cls is None else make(cls)
