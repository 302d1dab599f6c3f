#!/usr/bin/env python3
"""Writes redfish/schemas/: afasim's trimmed JSON schemas of the Redfish/Swordfish types it
serves (docs/swordfish.md "Schemas"). A maintainer's tool, not run by the build or the tests.

    scripts/redfish_trim_schemas.py REDFISH_PUBLICATIONS_GIT_DIR WALK.json [WALK.json.events]

REDFISH_PUBLICATIONS_GIT_DIR is a clone of DMTF/Redfish-Publications (bare is fine; read with
`git show HEAD:json-schema/...`); WALK.json is {path: resource} from a walk of a running
afasim (tests/integration/redfish/walk.py). For each @odata.type served it takes the
versioned DMTF definition (e.g. Volume.v1_10_2.json, definition Volume), keeps only the
top-level properties afasim serves (a served property the definition lacks is an error: the
service must not invent standard names), and hoists every definition those properties
reference (across files) into the file's own "definitions", with descriptions dropped.
Swordfish's own schemas (StoragePool, Capacity, DataStorageLoSCapabilities) are not in
DMTF's publication; their trimmed definitions below are written from the Swordfish 1.2
specification's property tables (SNIA, StoragePool v1_7_0, Capacity v1_2_0).
"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "redfish", "schemas")
ANNOTATION = "^([a-zA-Z_][a-zA-Z0-9_]*)?@(odata|Redfish|Message)\\.[a-zA-Z_][a-zA-Z0-9_]*$"
DROP = {"description", "longDescription", "versionAdded", "versionDeprecated", "deprecated", "enumDescriptions",
        "enumLongDescriptions", "enumVersionAdded", "enumVersionDeprecated", "enumDeprecated", "uris", "insertable",
        "updatable", "deletable", "units", "requiredOnCreate", "excerpt", "excerptCopy", "excerptCopyOnly",
        "translation", "release", "owningEntity", "title", "language", "copyright", "uriSegment", "$id", "$schema",
        "readonly", "requiredParameter", "parameters", "autoExpand", "translationText", "filter"}

IDREF = {"type": "object", "properties": {"@odata.id": {"type": "string", "format": "uri-reference"}},
         "additionalProperties": False}
STATUS_ANY = {"type": "object"}

# Swordfish definitions that DMTF does not publish (from the Swordfish 1.2 specification).
SWORDFISH = {
    "Capacity.json#/definitions/Capacity": {
        "type": ["object", "null"], "additionalProperties": False,
        "patternProperties": {ANNOTATION: {}},
        "properties": {"Data": {"$ref": "Capacity.json#/definitions/CapacityInfo"},
                       "Metadata": {"$ref": "Capacity.json#/definitions/CapacityInfo"},
                       "Snapshot": {"$ref": "Capacity.json#/definitions/CapacityInfo"},
                       "IsThinProvisioned": {"type": ["boolean", "null"]}}},
    "Capacity.json#/definitions/CapacityInfo": {
        "type": ["object", "null"], "additionalProperties": False,
        "patternProperties": {ANNOTATION: {}},
        "properties": {k: {"type": ["integer", "null"], "minimum": 0}
                       for k in ("AllocatedBytes", "ConsumedBytes", "GuaranteedBytes", "ProvisionedBytes")}},
    "DataStorageLoSCapabilities.json#/definitions/ProvisioningPolicy": {"type": "string", "enum": ["Fixed", "Thin"]},
}


def git_json(repo, path):
    return json.loads(subprocess.check_output(["git", "--git-dir", repo, "show", "HEAD:json-schema/" + path],
                                              stderr=subprocess.DEVNULL))


class Trimmer:
    def __init__(self, repo):
        self.repo = repo
        self.files = {}
        self.defs = {}

    def file(self, name):
        if name not in self.files:
            self.files[name] = git_json(self.repo, name)
        return self.files[name]

    def exists(self, name):
        try:
            self.file(name)
            return True
        except subprocess.CalledProcessError:
            return False

    def local_name(self, ref):
        file, _, pointer = ref.partition("#/definitions/")
        return file.replace(".json", "").replace(".", "_") + "_" + pointer

    def resolve(self, ref, current_file):
        """Hoists the definition `ref` names; returns the local $ref to it."""
        ref = re.sub(r"^http://redfish\.dmtf\.org/schemas/(swordfish/)?v1/", "", ref)
        if ref.startswith("#"):
            ref = current_file + ref
        name = self.local_name(ref)
        if name in self.defs:
            return "#/definitions/" + name
        self.defs[name] = None  # placeholder against cycles
        file, _, pointer = ref.partition("#/definitions/")
        if ref in SWORDFISH:
            body = SWORDFISH[ref]
        elif file == "odata-v4.json" and pointer == "idRef":
            body = IDREF
        elif file == pointer + ".json" and not self.exists(file):
            body = IDREF  # a Swordfish entity DMTF does not publish: a link to it
        else:
            body = self.file(file)["definitions"][pointer]
            # A navigation target (an entity: idRef or any of its versions) is always a link here.
            alternatives = body.get("anyOf", [])
            if any(a.get("$ref", "").endswith("odata-v4.json#/definitions/idRef") for a in alternatives):
                body = IDREF
            elif alternatives and all(re.search(r"\.v\d+_\d+_\d+\.json#", a.get("$ref", "")) for a in alternatives):
                body = {"$ref": alternatives[-1]["$ref"]}  # a complex type in every version: the newest
        self.defs[name] = self.clean(body, file)
        return "#/definitions/" + name

    def clean(self, node, current_file):
        if isinstance(node, list):
            return [self.clean(x, current_file) for x in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key in DROP:
                continue
            if key == "$ref":
                out[key] = self.resolve(value, current_file)
            elif key in ("properties", "patternProperties", "definitions"):
                out[key] = {k: self.clean(v, current_file) for k, v in value.items()}
            else:
                out[key] = self.clean(value, current_file)
        return out


def trim(repo, odata_type, served_props):
    namespace, type_name = odata_type.lstrip("#").rsplit(".", 1)
    file = namespace + ".json"
    t = Trimmer(repo)
    if namespace == "StoragePoolCollection":
        definition = collection_definition()
    elif namespace.startswith("StoragePool"):
        definition = storage_pool_definition()
        file = "StoragePool.v1_7_0.json"
    else:
        definition = t.file(file)["definitions"][type_name]
        # A collection's definition: idRef, or the collection itself.
        for alternative in definition.get("anyOf", []):
            if "properties" in alternative:
                definition = alternative
    if "properties" not in definition:
        raise SystemExit(f"{odata_type}: {file} has no properties for {type_name}: {list(definition)}")
    props = definition["properties"]
    unknown = sorted(p for p in served_props if p not in props)
    if unknown:
        raise SystemExit(f"{odata_type}: served properties not in the standard definition: {unknown}")
    kept = {p: props[p] for p in sorted(served_props | {"@odata.id", "@odata.type"}) if p in props}
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$comment": f"afasim's trimmed copy of {odata_type}: the properties afasim serves, from "
                    + ("the Swordfish 1.2 specification (SNIA)" if "StoragePool" in namespace else
                       f"DMTF Redfish-Publications json-schema/{file}") + " (scripts/redfish_trim_schemas.py)",
        "title": odata_type,
        "type": "object",
        "additionalProperties": False,
        "patternProperties": {ANNOTATION: {}},
        "required": sorted(set(definition.get("required", [])) & set(kept)),
        "properties": {k: t.clean(v, file) for k, v in kept.items()},
    }
    schema["definitions"] = t.defs
    return namespace + ".json", schema


def storage_pool_definition():
    link = {"$ref": "odata-v4.json#/definitions/idRef"}
    return {
        "required": ["@odata.id", "@odata.type", "Id", "Name"],
        "properties": {
            "@odata.id": {"type": "string", "format": "uri-reference"},
            "@odata.type": {"type": "string"},
            "@odata.etag": {"type": "string"},
            "Id": {"type": "string"}, "Name": {"type": "string"}, "Description": {"type": ["string", "null"]},
            "Capacity": {"$ref": "Capacity.json#/definitions/Capacity"},
            "RemainingCapacityPercent": {"type": ["integer", "null"], "minimum": 0, "maximum": 100},
            "SupportedRAIDTypes": {"type": "array", "items": {
                "type": "object", "additionalProperties": False,
                "properties": {"SupportedRAIDType": {"$ref": "Volume.json#/definitions/RAIDType"}}}},
            "AllocatedVolumes": link,
            "Status": {"$ref": "Resource.json#/definitions/Status"},
            "Oem": {"$ref": "Resource.json#/definitions/Oem"},
        }}


def collection_definition():
    return {
        "required": ["@odata.id", "@odata.type", "Name", "Members", "Members@odata.count"],
        "properties": {
            "@odata.id": {"type": "string", "format": "uri-reference"},
            "@odata.type": {"type": "string"},
            "Name": {"type": "string"},
            "Members": {"type": "array", "items": {"$ref": "odata-v4.json#/definitions/idRef"}},
            "Members@odata.count": {"type": "integer", "minimum": 0},
        }}


def main():
    repo, walk = sys.argv[1], {}
    for walk_file in sys.argv[2:]:  # the walk, and the events case's documents (WALK.json.events)
        with open(walk_file) as f:
            walk.update(json.load(f))
    served = {}
    for doc in walk.values():
        if doc:
            served.setdefault(doc["@odata.type"], set()).update(k for k in doc if "@" not in k or k.endswith("@odata.count")
                                                                 or k == "@odata.etag")
    os.makedirs(OUT, exist_ok=True)
    for odata_type, props in sorted(served.items()):
        name, schema = trim(repo, odata_type, props)
        with open(os.path.join(OUT, name), "w") as f:
            json.dump(schema, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"{name}: {len(schema['properties'])} properties, {len(schema['definitions'])} definitions")


if __name__ == "__main__":
    main()
