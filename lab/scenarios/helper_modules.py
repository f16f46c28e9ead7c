"""A scenario folder is a package of its own: the modules beside a scenario import without ``PYTHONPATH``.

A scenario's ``import helpers`` (or ``from helpers import Counter``) finds ``helpers.py`` (or the package
``helpers/``) beside it, with no ``PYTHONPATH``, as a script finds the modules beside it. The helpers are imported as
submodules of a private package made for that one loaded scenario, ``_lab_helpers_of_<scenario module>``
(:func:`helper_modules`), never under their bare names, because:

- a helper called ``json.py`` or ``queue.py`` shadows the standard module for the scenario (as beside a script),
  but never for the lab or for another scenario: ``sys.modules["json"]`` stays the standard one;
- two folders' ``helpers.py`` are two modules, and so are one folder's helpers imported by two scenarios: each
  scenario's classes and helpers are the modules the runner instruments, and re-executing one scenario's helpers
  (its file or a helper was edited) never swaps the module another scenario's classes already use;
- the folder is never put on ``sys.path``, so nothing leaks into later imports, and an audit that re-executes the
  archived ``sources/scenarios/`` imports the archived helpers beside the archived scenario, not the live folder.

The mapping lives in the ``__builtins__`` of the scenario and helper modules (their ``__import__`` only), so it
applies to their ``import`` statements, at the top or inside a function, and to nothing else in the process. A
helper that the ordinary import already finds as the very same file (the folder is on ``sys.path``) keeps its usual
name, as before. :func:`helper_stems` tells a folder's helpers from its scenarios (a file another file of the folder
imports and that declares no scenario), so the loader's listing leaves them out: a helper is not a broken scenario.

The loader (:mod:`lab.scenarios.loader`) gives each scenario module it executes its package
(:func:`give_helper_package`), forgets it when the scenario does not load (:func:`forget_scenario`), and executes a
scenario afresh when one of its helpers was edited (:func:`helpers_unchanged`).
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from lab.scenarios.executed import note_executed

_HELPERS = "__lab_helpers__"
"""Where a loaded scenario module keeps the name of its private package of helper modules."""
_DIGEST = "__lab_helper_sha256__"
"""Where a helper module keeps the SHA-256 of the bytes it was executed from (an edited helper is executed afresh)."""
_HELPER_PREFIX = "_lab_helpers_of_"


def helper_stems(files: Mapping[str, bytes]) -> set[str]:
    """The names among ``files`` (a folder's ``*.py`` by stem, their bytes) of the helpers: the files another one
    imports (``import helpers``, ``from helpers import x``) that declare no scenario (no class deriving from a
    ``...Scenario`` name, no ``pinned_scenario`` call).

    Read from the syntax, never by executing: listing a folder must not run its code, and an audit derives the
    same selection from the archived files alone. A file that does not parse stays a scenario, so its syntax error
    is reported in its own line.
    """
    if all(stem.isascii() for stem in files):
        # Parsing is the cost (a run lists its folder before any worker starts). Only a file that spells another
        # file's stem can import it, and only such a stem can be a helper, so only those files are parsed.
        # Python reads an identifier in its NFKC form, so a file that is not plain ASCII is searched in that form.
        texts = {stem: _searchable(data) for stem, data in files.items()}
        spelt = {stem: {other for other in files if other != stem and other in text} for stem, text in texts.items()}
        wanted = {stem for stem, named in spelt.items() if named} | {
            other for named in spelt.values() for other in named
        }
        files = {stem: data for stem, data in files.items() if stem in wanted}
    trees: dict[str, ast.Module] = {}
    for stem, data in files.items():
        try:
            trees[stem] = ast.parse(data, f"{stem}.py")
        except (SyntaxError, ValueError):
            continue
    imported: set[str] = set()
    for stem, tree in trees.items():
        imported |= _imported_names(tree) - {stem}
    return {stem for stem, tree in trees.items() if stem in imported and not _declares_scenario(tree)}


def _searchable(data: bytes) -> str:
    """The text of a file as its identifiers read (NFKC); undecodable bytes stay, replaced, so the search errs
    towards parsing."""
    text = data.decode("utf-8", "replace")
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def _imported_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


def _declares_scenario(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                if name.endswith("Scenario"):
                    return True
        elif isinstance(node, ast.Call):
            func = node.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "pinned_scenario":
                return True
    return False


def give_helper_package(module: ModuleType, module_name: str, folder: Path) -> str:
    """Make the scenario ``module`` (about to be executed as ``module_name``) import the modules of ``folder`` as
    its private helpers: a fresh package for them, and the builtins whose ``__import__`` finds them there. Returns
    the package's name (for :func:`forget_scenario`)."""
    helpers = _helper_package(module_name, folder)
    module.__dict__["__builtins__"] = _builtins_for(helpers, folder)
    module.__dict__[_HELPERS] = helpers
    return helpers


def helpers_unchanged(module: ModuleType) -> bool:
    """True when every helper the scenario ``module`` imported still has the bytes it was executed from."""
    return all(_helper_unchanged(sys.modules[name]) for name in helper_modules(module))


def forget_scenario(module_name: str, package: str) -> None:
    """A scenario that did not load leaves nothing in ``sys.modules``: neither itself nor its helpers."""
    sys.modules.pop(module_name, None)
    _forget_package(package)


def helper_modules(module: ModuleType) -> list[str]:
    """The names of the helper modules the scenario ``module`` imported from its folder, sorted; each is a
    submodule of the scenario's private package, so these are this scenario's helpers and no other's."""
    package = module.__dict__.get(_HELPERS)
    if not isinstance(package, str):
        return []
    prefix = package + "."
    return sorted(
        name
        for name, found in list(sys.modules.items())
        if name.startswith(prefix) and str(getattr(found, "__file__", "") or "").endswith(".py")
    )


def helper_name(module: ModuleType, name: str) -> str:
    """The name the scenario ``module``'s own ``import name`` gives the module: its private helper's name when
    ``name`` is a helper beside it (so ``line_modules = ("helpers",)`` means the helper), else ``name``."""
    package = module.__dict__.get(_HELPERS)
    folder = Path(str(getattr(module, "__file__", "") or "")).parent
    if isinstance(package, str) and _is_helper(folder, name.partition(".")[0]):
        return f"{package}.{name}"
    return name


def _helper_package(module_name: str, folder: Path) -> str:
    """A fresh, empty private package for the helpers of the scenario module ``module_name``, searching ``folder``:
    the helpers a previous load of that scenario imported are forgotten, so an edited helper is executed anew."""
    package = _HELPER_PREFIX + module_name
    _forget_package(package)
    spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
    spec.submodule_search_locations = [str(folder)]
    made = importlib.util.module_from_spec(spec)
    made.__path__ = [str(folder)]
    sys.modules[package] = made
    _HelperFinder.install(package, _builtins_for(package, folder))
    return package


def _forget_package(package: str) -> None:
    if package not in _BUILTINS_BY_PACKAGE and package not in sys.modules:
        return  # never made here (a worker's only load): its helpers are only ever imported once it is installed
    prefix = package + "."
    for name in [name for name in list(sys.modules) if name == package or name.startswith(prefix)]:
        del sys.modules[name]
    _BUILTINS_BY_PACKAGE.pop(package, None)


_builtins_made: dict[tuple[str, str], dict[str, Any]] = {}
_BUILTINS_BY_PACKAGE: dict[str, dict[str, Any]] = {}
"""The private helper packages :class:`_HelperFinder` serves, and the builtins their modules execute with."""


def _builtins_for(package: str, folder: Path) -> dict[str, Any]:
    """The builtins of the scenario's and its helpers' modules: the usual ones, but with an ``__import__`` that
    finds the folder's modules as submodules of ``package``."""
    key = (package, str(folder))
    made = _builtins_made.get(key)
    if made is None:
        made = dict(builtins.__dict__)
        made["__import__"] = _folder_import(package, folder, builtins.__import__)
        _builtins_made[key] = made
    return made


_Import = Callable[..., ModuleType]


def _folder_import(package: str, folder: Path, ordinary: _Import) -> _Import:
    def folder_import(
        name: str,
        globals: Mapping[str, object] | None = None,
        locals: Mapping[str, object] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        top = name.partition(".")[0]
        if level != 0 or not _is_helper(folder, top) or _found_as_itself(folder, top):
            return ordinary(name, globals, locals, fromlist, level)
        module = importlib.import_module(f"{package}.{name}")
        return module if fromlist else sys.modules[f"{package}.{top}"]

    return folder_import


def _is_helper(folder: Path, name: str) -> bool:
    """True when ``folder`` holds the module ``name``: ``name.py``, or a package ``name/__init__.py``."""
    if not name.isidentifier():
        return False
    return (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file()


def _found_as_itself(folder: Path, name: str) -> bool:
    """True when the ordinary import of ``name`` finds the very file beside the scenario (its folder is on
    ``sys.path``, as with ``PYTHONPATH``): it keeps its usual name then, as before helpers had a package."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.origin:
        return False
    here = folder / f"{name}.py"
    if not here.is_file():
        here = folder / name / "__init__.py"
    return os.path.realpath(spec.origin) == os.path.realpath(here)


def _helper_unchanged(module: ModuleType) -> bool:
    digest = module.__dict__.get(_DIGEST)
    try:
        return digest == hashlib.sha256(Path(str(module.__file__)).read_bytes()).hexdigest()
    except OSError:
        return False


class _HelperLoader(importlib.machinery.SourceFileLoader):
    """Executes a helper from its source (no bytecode read or written in the scenario folder), with the folder's
    builtins, and keeps the digest of what it executed."""

    def __init__(self, fullname: str, path: str, folder_builtins: dict[str, Any]) -> None:
        super().__init__(fullname, path)
        self._builtins = folder_builtins

    def exec_module(self, module: ModuleType) -> None:
        data = self.get_data(self.path)
        code = compile(data, self.path, "exec", dont_inherit=True)
        module.__dict__["__builtins__"] = self._builtins
        module.__dict__[_DIGEST] = hashlib.sha256(data).hexdigest()
        note_executed(self.path)
        exec(code, module.__dict__)


class _HelperFinder:
    """On ``sys.meta_path``: finds the submodules of the private helper packages, as the path finder would, but
    loads them with :class:`_HelperLoader`. Every other name is left to the finders after it."""

    @classmethod
    def install(cls, package: str, folder_builtins: dict[str, Any]) -> None:
        _BUILTINS_BY_PACKAGE[package] = folder_builtins
        if cls not in sys.meta_path:
            sys.meta_path.insert(0, cls)

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, dot, _rest = fullname.partition(".")
        folder_builtins = _BUILTINS_BY_PACKAGE.get(package)
        if not dot or folder_builtins is None or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, list(path))
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader) or not spec.origin:
            return spec
        loader = _HelperLoader(fullname, spec.origin, folder_builtins)
        return importlib.util.spec_from_file_location(
            fullname, spec.origin, loader=loader, submodule_search_locations=spec.submodule_search_locations
        )
