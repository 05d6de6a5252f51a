"""JSON Schema for editors (YAML language server), generated from the pydantic models — never by hand."""

from __future__ import annotations

from typing import Any

from fabricgen.schema.intent import Intent
from fabricgen.schema.inventory import Device


def intent_schema() -> dict[str, Any]:
    schema = Intent.model_json_schema(by_alias=True)
    schema["$id"] = "https://fabricgen.dev/schema/intent.json"
    schema["title"] = "fabricgen intent"
    return schema


def inventory_schema() -> dict[str, Any]:
    """hosts.yaml: a mapping of device name → Nornir host with fabricgen's `data`."""
    host = Device.model_json_schema(by_alias=True)
    definitions = host.pop("$defs", {})
    host["properties"].pop("name", None)
    # Any key may come from groups.yaml or defaults.yaml (Nornir inheritance), so none is required here.
    host["required"] = []
    definitions.get("DeviceData", {})["required"] = []
    return {"$id": "https://fabricgen.dev/schema/inventory-hosts.json", "title": "fabricgen inventory hosts.yaml",
            "type": "object", "additionalProperties": host, "$defs": definitions}
