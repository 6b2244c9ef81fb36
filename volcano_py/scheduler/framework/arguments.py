"""``Arguments``: one plugin's ``arguments:`` map from the scheduler conf, read with types.

Volcano's ``framework.Arguments`` only logs a value of the wrong type; here a wrong type is a
``ConfError`` naming the key and the expected type, raised when the plugin is built (at conf
load time — ``conf.load_conf`` builds every plugin once to check it). Numbers may be written
as YAML numbers or as strings (``"10"``), as Volcano accepts both.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from volcano_py.api.safeload import brief
from volcano_py.kube.changelog import ChangeLog


class ConfError(ValueError):
    """The scheduler configuration is wrong; the message names the key."""


class Arguments(Mapping[str, Any]):
    """Typed getters over a plugin's arguments."""

    def __init__(
        self, plugin: str, values: Mapping[str, Any] | None = None, notes: ChangeLog | None = None
    ) -> None:
        """Arguments of ``plugin`` (the name goes into error messages).

        ``notes``: the session's ``ChangeLog``, so a fallback the plugin logs when it is built
        (every session) is logged once per conf, not once per cycle.
        """
        self.plugin = plugin
        self._values = dict(values or {})
        self._notes = notes if notes is not None else ChangeLog()

    def warn(self, logger: logging.Logger, msg: str, *args: Any) -> None:
        """Log a warning about these arguments, once while it repeats."""
        self._notes.warning(logger, f"plugin/{self.plugin}", msg, *args)

    def __getitem__(self, key: str) -> Any:
        """The raw value."""
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        """Keys."""
        return iter(self._values)

    def __len__(self) -> int:
        """Number of arguments."""
        return len(self._values)

    def _fail(self, key: str, kind: str) -> ConfError:
        value = self._values[key]
        return ConfError(
            f"tiers[].plugins[{self.plugin}].arguments[{key}]: expected {kind}, got {brief(value)}"
        )

    def get_int(self, key: str, default: int) -> int:
        """An integer argument."""
        if key not in self._values:
            return default
        value = self._values[key]
        if isinstance(value, bool):
            raise self._fail(key, "an integer")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                raise self._fail(key, "an integer") from None
        raise self._fail(key, "an integer")

    def get_float(self, key: str, default: float) -> float:
        """A number argument."""
        if key not in self._values:
            return default
        value = self._values[key]
        if isinstance(value, bool):
            raise self._fail(key, "a number")
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                raise self._fail(key, "a number") from None
        raise self._fail(key, "a number")

    def get_bool(self, key: str, default: bool) -> bool:
        """A boolean argument (``true``/``false``, also as strings)."""
        if key not in self._values:
            return default
        value = self._values[key]
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise self._fail(key, "a boolean")

    def get_str(self, key: str, default: str) -> str:
        """A string argument."""
        if key not in self._values:
            return default
        value = self._values[key]
        if isinstance(value, str):
            return value
        raise self._fail(key, "a string")
