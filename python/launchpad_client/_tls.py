"""TLS to a launch's nodes (https:// addresses).

A launch whose nodes serve beyond loopback speaks TLS 1.3 with credentials
of its own (docs/protocol.md#tls): one certificate and key, made by the
launcher, which every node presents and against which every peer checks the
other. So does this client: it trusts that certificate (or the site's CA the
launch was given), not host names, since nodes' addresses change, and it
presents the certificate itself, or the node refuses it at the handshake.
"""

from __future__ import annotations

import contextlib
import os
import ssl

from ._protocol import RUN_DIRECTORY_AUTHORITY as CA
from ._protocol import RUN_DIRECTORY_CERTIFICATE as CERTIFICATE
from ._protocol import RUN_DIRECTORY_KEY as KEY


def tls_context(ca: str, certificate: str, key: str) -> ssl.SSLContext:
    """An ssl.SSLContext for the nodes of one launch: trusts `ca` (the
    launch's certificate, or a site's CA) and presents `certificate` with
    `key` (PEM files)."""
    for what, path in (("CA", ca), ("certificate", certificate), ("key", key)):
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no TLS {what} file {path}: give the files of the launch's run "
                                    f"directory ({CERTIFICATE}, {KEY}), or the site's own")
    context = _client_context()
    try:
        context.load_verify_locations(cafile=ca)
        context.load_cert_chain(certificate, key)
    except ssl.SSLError as e:
        raise ValueError(f"cannot use the TLS files {certificate}, {key} (CA {ca}): {e.reason or e}; "
                         "are they PEM files of one launch?") from None
    return context


def server_context_of_pem(ca: str, certificate: str, key: str) -> ssl.SSLContext:
    """A node's own side of TLS, as a C++ node's: TLS 1.3, presenting the
    launch's certificate, and a peer must present one `ca` signed."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=ca)
    load_pem_chain(context, certificate, key)
    return context


def tls_context_of_pem(ca: str, certificate: str, key: str) -> ssl.SSLContext:
    """tls_context from the PEM texts themselves (a Python node's, which
    its host gives it without a file)."""
    context = _client_context()
    context.load_verify_locations(cadata=ca)
    load_pem_chain(context, certificate, key)
    return context


def load_pem_chain(context: ssl.SSLContext, certificate: str, key: str) -> None:
    """context.load_cert_chain from PEM texts. ssl reads a certificate and
    its key from files only: these are memory files of this process
    (memfd), closed once read, so that the key is never written to a
    disk."""
    with contextlib.ExitStack() as files:
        paths: list[str] = []
        for text in (certificate, key):
            fd = os.memfd_create("lp-tls")
            files.callback(os.close, fd)
            os.write(fd, text.encode("ascii"))
            paths.append(f"/proc/self/fd/{fd}")
        context.load_cert_chain(*paths)


def _client_context() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    # Peers are checked against the launch's certificate, not their names.
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    return context


def context_of_run_dir(run_dir: str | os.PathLike[str]) -> ssl.SSLContext | None:
    """The context for the launch whose run directory is `run_dir`; None if
    the launch has no TLS credentials there (its nodes speak plain HTTP)."""
    certificate = os.path.join(run_dir, CERTIFICATE)
    if not os.path.isfile(certificate):
        return None
    ca = os.path.join(run_dir, CA)
    return tls_context(ca if os.path.isfile(ca) else certificate, certificate,
                       os.path.join(run_dir, KEY))
