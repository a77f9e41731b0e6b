"""Fixtures shared by the test folders."""
from __future__ import annotations

import subprocess

import pytest


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 and its key (openssl), for the TLS tests of the
    exporters' HTTP server."""
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem"), "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return d / "cert.pem", d / "key.pem"
