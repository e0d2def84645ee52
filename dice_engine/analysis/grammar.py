"""The tree-sitter-cuda grammar the analyses parse with, and the field ids they look up."""
from __future__ import annotations

import tree_sitter_cuda
from tree_sitter import Language

LANGUAGE = Language(tree_sitter_cuda.language())


def _field_id(name: str) -> int:
    fid = LANGUAGE.field_id_for_name(name)
    if fid is None:                 # a grammar upgrade renamed it: fail at import, not silently later
        raise RuntimeError(f"tree-sitter-cuda has no field {name!r}")
    return fid


class FIELD:
    """Field ids of the grammar: `node.child_by_field_id(FIELD.left)` skips the by-name lookup,
    a scan of the grammar's field names on every call, in the analyses' hottest paths."""
    alternative: int = _field_id("alternative")
    argument: int = _field_id("argument")
    arguments: int = _field_id("arguments")
    body: int = _field_id("body")
    condition: int = _field_id("condition")
    consequence: int = _field_id("consequence")
    declarator: int = _field_id("declarator")
    default_value: int = _field_id("default_value")
    directive: int = _field_id("directive")
    field: int = _field_id("field")
    function: int = _field_id("function")
    indices: int = _field_id("indices")
    initializer: int = _field_id("initializer")
    left: int = _field_id("left")
    name: int = _field_id("name")
    operator: int = _field_id("operator")
    parameters: int = _field_id("parameters")
    right: int = _field_id("right")
    size: int = _field_id("size")
    type: int = _field_id("type")
    update: int = _field_id("update")
    value: int = _field_id("value")
