"""Pure API layer: constants, resources, quantities, selectors and typed views (no I/O).

``JSON`` is the one alias for an API object as the API server sends it (a dict read from
JSON); every module that handles raw objects imports it from here.
"""

from typing import Any

JSON = dict[str, Any]
