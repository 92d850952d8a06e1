"""A client of a plain ``http://`` service loads no certificate store (``posthoc.http.no_trust_context``): a TLS
handshake it is led into must fail verification, never go unverified. Checked against a real TLS server
(``openssl s_server`` with a self-signed certificate)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from posthoc.http import no_trust_context
from posthoc.labelstudio.ports import free_port, port_is_free


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``openssl s_server -www`` on a free port with a new self-signed certificate for 127.0.0.1; its URL and
    the certificate's file."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command line (Debian: apt-get install openssl)")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    port = free_port()
    server = subprocess.Popen([openssl, "s_server", "-accept", str(port), "-cert", str(cert), "-key", str(key),
                               "-www", "-quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while port_is_free(port):
            if time.monotonic() > deadline or server.poll() is not None:
                pytest.fail("openssl s_server did not start")
            time.sleep(0.1)
        yield f"https://127.0.0.1:{port}/", cert
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_context_verifies_and_trusts_nothing() -> None:
    import ssl

    context = no_trust_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.get_ca_certs() == [] and context.cert_store_stats()["x509_ca"] == 0


def test_a_tls_handshake_with_it_fails_verification(tls_server: tuple[str, Path]) -> None:
    import ssl

    url, cert = tls_server
    trusting = ssl.create_default_context(cafile=str(cert))  # the server is sound: a context that trusts it gets in
    with httpx.Client(verify=trusting) as client:
        assert client.get(url).status_code == 200
    with httpx.Client(verify=no_trust_context()) as client, pytest.raises(httpx.ConnectError,
                                                                         match="CERTIFICATE_VERIFY_FAILED"):
        client.get(url)
