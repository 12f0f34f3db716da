"""The line items container of IMS Assignment and Grade Services 2.0: where a launch gives only
``lineitems`` (a Moodle link with grade sync and column management, a course navigation
launch), the tool finds its assignment's line item there (GET, filtered by ``resource_id``,
paged by ``Link: rel="next"``) or creates it (POST a line item with its label, maximum,
``resourceId``, ``resourceLinkId`` and tag), with a token of the lineitem scope."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from .paging import links

LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
LINEITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
CONTAINER_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
TAG = "grader"  # the tag of the line items this tool makes
MAX_PAGES = 50  # of a container read (a course has some hundreds of columns at most)
MAX_BYTES = 2_000_000  # of one answer read
SECONDS = 15  # an HTTP call's timeout


class LineItemError(Exception):
    """The container refused or could not be reached: the text says which, ``status`` its HTTP status."""

    def __init__(self, text: str, status: int | None = None):
        super().__init__(text)
        self.status = status


def find_or_create(container: str, token: str, resource_id: str, label: str, maximum: float,
                   link_id: str | None) -> str:  # fmt: skip
    """The URL of the line item of ``resource_id`` in ``container``: the one there (one of this
    resource link, or of this tool's tag, first), else one created now."""
    return find(container, token, resource_id, link_id) or create(container, token, resource_id, label, maximum,
                                                                   link_id)  # fmt: skip


def find(container: str, token: str, resource_id: str, link_id: str | None) -> str | None:
    """The line item of ``resource_id`` in ``container`` (None: there is none), every page read;
    the filter is checked here too, as a platform may ignore it."""
    url: str | None = _with_query(container, {"resource_id": resource_id})
    found: list[dict[str, Any]] = []
    for _ in range(MAX_PAGES):
        if url is None:
            break
        body, header = _call("GET", url, None, {"Accept": CONTAINER_TYPE, "Authorization": f"Bearer {token}"})
        try:
            items = json.loads(body)
        except ValueError:
            raise LineItemError(f"{url} answered no JSON line items") from None
        if not isinstance(items, list):
            raise LineItemError(f"{url} answered no list of line items")
        found += [i for i in items if isinstance(i, dict) and i.get("resourceId") == resource_id
                  and isinstance(i.get("id"), str) and i["id"]]  # fmt: skip
        url = links(header, url).get("next")
    if not found:
        return None
    found.sort(key=lambda i: (not link_id or i.get("resourceLinkId") != link_id, i.get("tag") != TAG))
    return str(found[0]["id"])


def create(container: str, token: str, resource_id: str, label: str, maximum: float, link_id: str | None) -> str:
    """A new line item in ``container``: its URL (the ``id`` the platform answers)."""
    item: dict[str, Any] = {"scoreMaximum": maximum, "label": label, "resourceId": resource_id, "tag": TAG}
    if link_id:
        item["resourceLinkId"] = link_id
    body, _ = _call("POST", container, json.dumps(item).encode(),
                    {"Content-Type": LINEITEM_TYPE, "Accept": LINEITEM_TYPE, "Authorization": f"Bearer {token}"})  # fmt: skip
    try:
        made = json.loads(body)
    except ValueError:
        made = None
    if not isinstance(made, dict) or not isinstance(made.get("id"), str) or not made["id"]:
        raise LineItemError(f"{container} answered no line item id to a new line item")
    return str(made["id"])


def _with_query(url: str, params: dict[str, str]) -> str:
    """``url`` with ``params`` added to its query (a container URL may have one: Moodle's has)."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True) + list(params.items())
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def _call(method: str, url: str, body: bytes | None, headers: dict[str, str]) -> tuple[bytes, str]:
    """The answer's body and its Link headers (joined) to ``method`` on ``url``."""
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=SECONDS) as answer:  # noqa: S310 (the launch's URL)
            return bytes(answer.read(MAX_BYTES)), ", ".join(answer.headers.get_all("Link") or [])
    except urllib.error.HTTPError as e:
        detail = e.read(300).decode("utf-8", "replace").strip()
        raise LineItemError(f"{url} answered {e.code} {e.reason}" + (f": {detail}" if detail else ""), e.code) from None
    except (urllib.error.URLError, OSError) as e:
        raise LineItemError(f"cannot reach {url}: {getattr(e, 'reason', e)}") from None
