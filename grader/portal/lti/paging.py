"""The URLs of an HTTP ``Link`` header by relation (RFC 8288), as LTI services page their
answers (``rel="next"``: the memberships of NRPS, the line items of AGS); one reading for both."""

from __future__ import annotations

import re
import urllib.parse


def links(header: str, base: str) -> dict[str, str]:
    """The URLs of a Link header (RFC 8288) by relation: ``<url>; rel="next"`` and the like,
    several relations in one ``rel`` too; relative URLs made absolute from ``base``."""
    found: dict[str, str] = {}
    for target, params in re.findall(r"<([^>]*)>((?:\s*;\s*[^;,]+)*)", header):
        for quoted, bare in re.findall(r'(?i)\brel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))', params):
            for rel in (quoted or bare).split():
                found.setdefault(rel.lower(), urllib.parse.urljoin(base, target))
    return found
