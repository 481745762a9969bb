"""The intent's JSON Schema as `fabricgen schema` prints it: for editors, and for people.

pydantic's schema shows each default as the model holds it: 400 for `nic_speed` (the user
writes "400G"), [1, 1] for `oversubscription` ("1:1"), a whole dump of every section, and
`null` for a key whose default depends on other keys. Here a default is shown as the user
writes it (the field's own serializer), and left out where it is a section (its keys carry
their defaults) or derived (the description says from what).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter

from generator.intent.model import Intent
from generator.intent.spelling import inner_types

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    """root and every model below it, each once, in field order."""
    found = [root]
    for model in found:
        for field in model.model_fields.values():
            for tp in inner_types(field.annotation):
                if isinstance(tp, type) and issubclass(tp, BaseModel) and tp not in found:
                    found.append(tp)
    return found


def _user_defaults(doc: dict[str, Any]) -> None:
    for model in _models(Intent):
        props = (doc if model is Intent else doc["$defs"][model.__name__])["properties"]
        for name, field in model.model_fields.items():
            prop = props[field.alias or name]
            if field.is_required():
                continue
            default = field.get_default(call_default_factory=True)
            if default is None or isinstance(default, BaseModel):
                prop.pop("default", None)
            else:
                # the field's metadata holds its serializer (SpeedG: 400 -> "400G")
                typed = Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
                prop["default"] = TypeAdapter(typed).dump_python(default, mode="json")


def intent_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of an intent file."""
    doc = Intent.model_json_schema(by_alias=True)
    _user_defaults(doc)
    doc["$schema"] = SCHEMA_DIALECT
    doc["title"] = "fabricgen intent"
    doc["description"] = "One reviewed YAML intent for a lossless RoCEv2 GPU fabric (fabricgen)."
    return doc
