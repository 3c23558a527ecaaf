"""A pytest plugin for the A2A conformance kit (loaded by `scripts/a2a-tck` with `-p tck_https`):
serves the kit's webhook receiver over https with the certificate in TCK_WEBHOOK_CERT and
TCK_WEBHOOK_KEY, and names it with an https URL. The drive delivers push notifications only to
https; without this the kit's three delivery tests register plain-http receivers, are refused and
skip. The drive trusts the certificate through DRIVE_FETCH_ROOT_CERT (a test-only setting)."""

import os
import ssl
from http.server import HTTPServer

from tck.webhook import server


class _TlsServer(HTTPServer):
    def server_bind(self) -> None:
        super().server_bind()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.environ["TCK_WEBHOOK_CERT"], os.environ["TCK_WEBHOOK_KEY"])
        self.socket = context.wrap_socket(self.socket, server_side=True)


def _url(self, webhook_host: str = "localhost") -> str:
    return f"https://{webhook_host}:{self.port}/webhook"


server.HTTPServer = _TlsServer
server.WebhookReceiver.url = _url
