"""One registry type for every extensible kind of thing (attributors, LLM protocols, import
formats, systems): a name -> an entry, filled by the modules that implement the entries.

Why one type: adding an attributor, a format or a system should be one module plus its
registration, as adding a benchmark is one package. Registration sits next to the code
(`@ATTRIBUTORS.register("name", ...)` on the factory, or `REGISTRY.add(name, entry)`), and
the registry knows only *where* the built-ins live (`builtins`: module names it imports on
the first lookup, an explicit lazy resolver instead of imports kept for their side
effects). Code outside the package registers through an entry point in the registry's
group (`[project.entry-points."whowhen.attributors"] name = "module"`): the module is
imported on the first lookup and must register `name`.

Base layer: the registry imports nothing of the project but the error type, so any layer
can hold one; the modules it resolves may sit higher up.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from whowhen.errors import WhowhenError

T = TypeVar("T")


class Registry(Generic[T]):
    """Name -> entry for one kind. `kind` words the errors ("attributor"), `group` is the
    entry-point group of plug-ins, `field` the config field an unknown name is blamed on."""

    def __init__(
        self,
        kind: str,
        group: str,
        field: str,
        builtins: tuple[str, ...],
        entry: Callable[..., T] | None = None,
    ) -> None:
        self.kind, self.group, self.field, self.builtins = kind, group, field, builtins
        self.entry = entry  # (name, fn, **info) -> T, for the decorator form
        self._entries: dict[str, T] = {}
        self._rank: dict[str, int] = {}  # name -> its module's place in `builtins`
        self._loaded = False
        self._loading = False

    def add(self, name: str, entry: T, *, replace: bool = False, module: str | None = None) -> T:
        """Register `entry` under `name`; a second entry under a taken name is an error (two
        modules claiming one name is a bug) unless `replace` says the swap is meant.
        `module` is the registering module (default: the caller's); it places the name."""
        if name in self._entries and not replace and self._entries[name] != entry:
            raise WhowhenError(f"{self.kind} {name!r} is already registered", field=self.field)
        self._entries[name] = entry
        self._rank[name] = self._rank_of(module or sys._getframe(1).f_globals.get("__name__", ""))
        return entry

    def _rank_of(self, module: str) -> int:
        """Where `module` stands in `builtins` (a module under a listed package counts as
        it); plug-ins and anything else after every built-in."""
        for i, builtin in enumerate(self.builtins):
            if module == builtin or module.startswith(builtin + "."):
                return i
        return len(self.builtins)

    def _ordered(self) -> list[str]:
        """The names in the order of `builtins` whichever module was imported first (a test
        may import one before the first lookup loads the rest); within one module, and
        among plug-ins, in registration order."""
        return sorted(self._entries, key=self._rank.__getitem__)

    def register(
        self, name: str, **info: object
    ) -> Callable[[Callable[..., object]], Callable[..., object]]:
        """Decorator form, for registries whose entry wraps a function: the entry is
        `entry(name, fn, **info)`, and the function itself is returned unchanged."""

        def wrap(fn: Callable[..., object]) -> Callable[..., object]:
            if self.entry is None:
                raise TypeError(f"the {self.kind} registry takes entries, not functions")
            self.add(name, self.entry(name, fn, **info), module=fn.__module__)
            return fn

        return wrap

    def remove(self, name: str) -> None:
        """Drop an entry (for tests that register their own)."""
        self._entries.pop(name, None)
        self._rank.pop(name, None)

    def _load(self) -> None:
        """Import the built-in modules, then the plug-ins' entry points, once."""
        if self._loaded or self._loading:
            return
        self._loading = True
        try:
            for module in self.builtins:
                importlib.import_module(module)
            for ep in sorted(entry_points(group=self.group), key=lambda e: e.name):
                try:
                    ep.load()
                except Exception as exc:  # a broken plug-in is named, not a traceback
                    raise WhowhenError(
                        f"{self.kind} plug-in {ep.name!r} ({ep.value}) failed to load: "
                        f"{type(exc).__name__}: {exc}",
                        field=self.field,
                    ) from exc
                if ep.name not in self._entries:
                    raise WhowhenError(
                        f"{self.kind} plug-in {ep.name!r} ({ep.value}) registered no "
                        f"{self.kind} named {ep.name!r}",
                        field=self.field,
                    )
            self._loaded = True
        finally:
            self._loading = False

    def get(self, name: str) -> T:
        """The entry `name`; an unknown name is one line listing the known ones."""
        self._load()
        try:
            return self._entries[name]
        except KeyError:
            raise WhowhenError(
                f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}",
                field=self.field,
            ) from None

    def names(self) -> tuple[str, ...]:
        """Every registered name: built-ins in the order of `builtins`, then plug-ins."""
        self._load()
        return tuple(self._ordered())

    def items(self) -> Iterator[tuple[str, T]]:
        self._load()
        return iter([(name, self._entries[name]) for name in self._ordered()])

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._entries
