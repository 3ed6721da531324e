"""A host for Client ID Metadata Documents in the tests: a real HTTPS server on 127.0.0.1
with a certificate made here (a test CA and a leaf for the address 127.0.0.1), trusted
by the process through ``SSL_CERT_FILE`` — OpenSSL's own way to name the trust store,
read by ``ssl.create_default_context()`` — so the server's fetcher verifies it as it
would any certificate. It records every request it receives: a refused address must
never be fetched.

``metadata_host`` is the fixture (tests/test_oauth_cimd.py, demo_tests/test_mcp_oauth_flow.py).
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["MetadataServer", "Page", "metadata_host"]


@dataclass
class Page:
    """One answer: a status, headers and a body; ``stall`` seconds of silence after the
    headers (a server that trickles); ``length`` False: no Content-Length (read to the
    end of the connection)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    stall: float = 0.0
    length: bool = True


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A CA (its certificate: the trust store), and a leaf for IP 127.0.0.1 it signed."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("affordances test CA"))
        .issuer_name(_name("affordances test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, cert_file, key_file = (directory / n for n in ("ca.pem", "leaf.pem", "key.pem"))
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_file, cert_file, key_file


class MetadataServer:
    """HTTPS on 127.0.0.1 (a free port) serving :attr:`pages` by path; :attr:`requests`
    lists the paths asked for, in order."""

    def __init__(self, directory: Path) -> None:
        self.ca_file, cert_file, key_file = _certificates(directory)
        self.pages: dict[str, Page] = {}
        self.requests: list[str] = []
        self.released = threading.Event()  # ends every stall at once when closing
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append(self.path)
                page = owner.pages.get(self.path, Page(status=404, body=b"not here"))
                self.send_response(page.status)
                for name, value in page.headers.items():
                    self.send_header(name, value)
                if page.length:
                    self.send_header("Content-Length", str(len(page.body)))
                self.end_headers()
                self.wfile.flush()
                if page.stall:
                    owner.released.wait(page.stall)
                # The client may have given up first: what a stall is for.
                with contextlib.suppress(OSError):
                    self.wfile.write(page.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert_file, key_file)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.port}{path}"

    def publish(
        self,
        path: str,
        document: Any,
        *,
        content_type: str = "application/json",
        cache_control: str | None = None,
        **options: Any,
    ) -> str:
        """Serve ``document`` (JSON, or bytes as they are) at ``path``; its URL."""
        body = document if isinstance(document, bytes) else json.dumps(document).encode()
        headers = {"Content-Type": content_type}
        if cache_control is not None:
            headers["Cache-Control"] = cache_control
        self.pages[path] = Page(body=body, headers=headers, **options)
        return self.url(path)

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def metadata_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MetadataServer]:
    server = MetadataServer(tmp_path)
    # The process trusts the test CA (and only it) while the test runs.
    monkeypatch.setenv("SSL_CERT_FILE", str(server.ca_file))
    try:
        yield server
    finally:
        server.close()
