"""Walks a Redfish service from its root by @odata.id links (the Redfish integration test and
scripts/redfish_trim_schemas.py use it). Standard library only."""

import json
import urllib.error
import urllib.request


def links_in(doc, out):
    """Every @odata.id value anywhere in `doc` (objects and arrays, any depth)."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "@odata.id" and isinstance(value, str):
                out.append(value)
            else:
                links_in(value, out)
    elif isinstance(doc, list):
        for value in doc:
            links_in(value, out)
    return out


def walk(base_url, headers, context=None, root="/redfish/v1"):
    """GETs every resource reachable from `root`. Returns ({path: document}, [(from, to, status)]
    for every link that did not answer 200)."""
    seen, dangling, queue = {}, [], [(None, root)]
    while queue:
        source, path = queue.pop(0)
        path = path.split("#", 1)[0]  # a link into a resource's array names the resource
        if path in seen:
            continue
        req = urllib.request.Request(base_url + path, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30, context=context) as r:
                doc = json.loads(r.read())
        except urllib.error.HTTPError as e:
            dangling.append((source, path, e.code))
            seen[path] = None
            continue
        seen[path] = doc
        for target in links_in(doc, []):
            if target.split("#", 1)[0] not in seen:
                queue.append((path, target))
    return seen, dangling
