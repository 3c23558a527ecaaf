#!/usr/bin/env python3
"""An MCP client that finds the drive's sign-in by itself, as an outside tool client would:
the official MCP Python SDK's OAuthClientProvider against drive-mcp's streamable HTTP. The
SDK meets the 401, reads the protected-resource metadata it names, then the drive's
authorization-server metadata, registers itself, sends the person to the consent page with a
PKCE challenge, exchanges the code and calls the tools with the token it got. The person's part
(opening the page, ticking, signing in with their API token, allowing) is played here by posting
the page's own form, as a browser would.

  oauth_sign_in.py MCP_URL API_TOKEN TICKED...      (TICKED: the scopes the person leaves ticked)

The client asks for `read write`. Prints one JSON object: the scope granted, the files
list_files gave, and what remove_files answered. Runs in $DRIVE_MCP_PYTHON.
"""

import asyncio
import html
import json
import re
import sys
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

HIDDEN = re.compile(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">')


class Memory:
    """Token storage: this run's only."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def main(url, api_token, ticked):
    landed = {}

    async def person_answers(authorization_url):
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as http:
            page = await http.get(authorization_url)
            if page.status_code != 200 or 'id="consent"' not in page.text:
                raise SystemExit(f"oauth_sign_in: FAIL: no consent page ({page.status_code}): {page.text[:300]}")
            form = [(name, html.unescape(value)) for name, value in HIDDEN.findall(page.text)]
            form += [("scope", scope) for scope in ticked]
            form += [("api_token", api_token), ("decision", "allow")]
            answer = await http.post(
                urljoin(authorization_url, "/oauth/authorize"),
                content=urlencode(form),
                headers={"Content-Type": "application/x-www-form-urlencoded"},
            )
            if answer.status_code != 303:
                raise SystemExit(f"oauth_sign_in: FAIL: the consent was not taken ({answer.status_code})")
            landed.update({k: v[0] for k, v in parse_qs(urlparse(answer.headers["location"]).query).items()})

    async def back_at_the_app():
        return AuthorizationCodeResult(code=landed["code"], state=landed.get("state"), iss=landed.get("iss"))

    storage = Memory()
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="SDK tool client",
            redirect_uris=["http://127.0.0.1:9/callback"],
            scope="read write",
        ),
        storage=storage,
        redirect_handler=person_answers,
        callback_handler=back_at_the_app,
    )
    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=120))
    async with Client(streamable_http_client(url, http_client=http)) as client:
        listed = await client.call_tool("list_files", {})
        files = (listed.structured_content or {}).get("files", [])
        ids = [f["id"] for f in files]
        removed = await client.call_tool("remove_files", {"ids": ids[:1]}) if ids else None
    out = {
        "granted": storage.tokens.scope if storage.tokens else None,
        "clientId": storage.client.client_id if storage.client else None,
        "files": [f["fileName"] for f in files],
        "removeIsError": bool(removed and removed.is_error),
        "removeText": " ".join(c.text for c in (removed.content if removed else []) if hasattr(c, "text")),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
