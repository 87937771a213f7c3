"""Package re-exports looked up on first use (PEP 562), for packages whose
``__init__`` must stay cheap to import (``chunkls.chunking``, ``chunkls.index``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(
    package: str, module_of: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` and ``__dir__``: a name of ``module_of`` is
    imported from ``package.<its module>`` when first asked for, then kept in the
    package's ``namespace``."""

    def __getattr__(name: str) -> Any:
        """A re-exported name, imported from its module the first time it is asked for."""
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *module_of})

    return __getattr__, __dir__
