"""The ``kube-system/extension-apiserver-authentication`` ConfigMap (kube's cluster-authentication-trust-controller).

Extension API servers read it to learn whom to trust ("Configure the
Aggregation Layer", "Authentication flow"): the client CA
(``--client-ca-file``) for client certificates, and the front-proxy trust
(``--requestheader-client-ca-file``, ``--requestheader-allowed-names``,
``--requestheader-username-headers``, ``--requestheader-group-headers``,
``--requestheader-extra-headers-prefix``) for the requests the aggregator
proxies to them. Data keys and formats are kube-apiserver's:

    client-ca-file: <PEM bundle>
    requestheader-client-ca-file: <PEM bundle>
    requestheader-allowed-names: '["front-proxy-client"]'      (JSON arrays)
    requestheader-username-headers: '["X-Remote-User"]'
    requestheader-group-headers: '["X-Remote-Group"]'
    requestheader-extra-headers-prefix: '["X-Remote-Extra-"]'

Every gateway (as every kube-apiserver) writes it at start and then every
:data:`RESYNC` seconds, re-reading the CA files, so rotated files reach the
ConfigMap. What is already there is *combined* with this gateway's values,
as kube does for several API servers with different flags: CA bundles are
unioned (expired and duplicate certificates dropped), name and header lists
unioned in order. The requestheader keys are written only when a
requestheader CA is known. Source: kube ``pkg/controlplane/controller/clusterauthenticationtrust``.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kapi import errors, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2

log = logging.getLogger(__name__)

NAMESPACE = "kube-system"
NAME = "extension-apiserver-authentication"
RESYNC = 60.0  # seconds between reconciliations (kube's controller resyncs every minute)
TIMEOUT = 5.0
_LISTS = ("requestheader-allowed-names", "requestheader-username-headers", "requestheader-group-headers",
          "requestheader-extra-headers-prefix")


@dataclass(frozen=True)
class AuthenticationInfo:
    """This gateway's authentication flags: CA file paths (may be empty) and the requestheader lists."""

    client_ca_file: str = ""
    requestheader_client_ca_file: str = ""
    requestheader_allowed_names: tuple[str, ...] = ()
    requestheader_username_headers: tuple[str, ...] = ()
    requestheader_group_headers: tuple[str, ...] = ()
    requestheader_extra_headers_prefix: tuple[str, ...] = ()

    @classmethod
    def from_flags(cls, client_ca_file: str, requestheader_client_ca_file: str, allowed_names: str,
                   username_headers: str, group_headers: str, extra_headers_prefix: str) -> AuthenticationInfo:
        """From the flag values (comma-separated lists, as kube-apiserver's string-slice flags)."""
        def split(text: str) -> tuple[str, ...]:
            return tuple(p.strip() for p in (text or "").split(",") if p.strip())
        return cls(client_ca_file, requestheader_client_ca_file, split(allowed_names), split(username_headers),
                   split(group_headers), split(extra_headers_prefix))

    def data(self) -> dict[str, str]:
        """The ConfigMap data this gateway requires (kube's getConfigMapDataFor); raises OSError for an unreadable
        CA file."""
        out: dict[str, str] = {}
        if self.client_ca_file:
            out["client-ca-file"] = Path(self.client_ca_file).read_text()
        if self.requestheader_client_ca_file:
            out["requestheader-client-ca-file"] = Path(self.requestheader_client_ca_file).read_text()
            for key, values in zip(_LISTS, (self.requestheader_allowed_names, self.requestheader_username_headers,
                                            self.requestheader_group_headers,
                                            self.requestheader_extra_headers_prefix), strict=True):
                out[key] = json.dumps(list(values))
        return out


def _certs(pem: str, now: datetime.datetime) -> list[x509.Certificate]:
    try:
        certs = x509.load_pem_x509_certificates(pem.encode())
    except ValueError:
        return []
    return [c for c in certs if c.not_valid_after_utc > now]


def combine_bundles(bundles: Sequence[str], now: datetime.datetime) -> str:
    """The certificates of ``bundles`` (PEM) in order, expired, unparsable and repeated ones dropped."""
    seen: list[bytes] = []
    for bundle in bundles:
        for cert in _certs(bundle, now):
            der = cert.public_bytes(serialization.Encoding.DER)
            if der not in seen:
                seen.append(der)
    return "".join(x509.load_der_x509_certificate(d).public_bytes(serialization.Encoding.PEM).decode()
                   for d in seen)


def _list(text: str | None) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def combined(existing: dict[str, str], required: dict[str, str], now: datetime.datetime) -> dict[str, str]:
    """The data to store: ``existing`` (what the ConfigMap holds) combined with ``required`` (this gateway's)."""
    out: dict[str, str] = {}
    client = combine_bundles([existing.get("client-ca-file", ""), required.get("client-ca-file", "")], now)
    if client:
        out["client-ca-file"] = client
    header_ca = combine_bundles([existing.get("requestheader-client-ca-file", ""),
                                 required.get("requestheader-client-ca-file", "")], now)
    if header_ca:
        out["requestheader-client-ca-file"] = header_ca
        for key in _LISTS:
            merged: list[str] = []
            for value in [*_list(existing.get(key)), *_list(required.get(key))]:
                if value not in merged:
                    merged.append(value)
            out[key] = json.dumps(merged)
    return out


class TrustPublisher:
    """Writes and keeps the ConfigMap through storage (the gateway is the API server, as kube's controller)."""

    def __init__(self, storage: Any, info: AuthenticationInfo, resync: float = RESYNC):
        self.storage, self.info, self.resync = storage, info, resync
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Reconcile now and then every ``resync`` seconds, until :meth:`stop`."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="authentication-trust")

    async def stop(self) -> None:
        """Stop the loop."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        delay = 0.5
        while True:
            try:
                await self.reconcile()
                await asyncio.sleep(self.resync)
                delay = 0.5
            except asyncio.CancelledError:
                raise
            except (errors.StatusError, OSError) as exc:  # storage not ready yet, a lost race, an unreadable file
                log.info("%s/%s not written yet: %s", NAMESPACE, NAME, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.resync)

    async def reconcile(self, now: datetime.datetime | None = None) -> bool:
        """Create or update the ConfigMap to include this gateway's data; True if it wrote.

        Raises StatusError (storage unavailable, 409 Conflict on a concurrent
        write: the caller retries) and OSError for an unreadable CA file.
        """
        now = now or datetime.datetime.now(datetime.UTC)
        required = self.info.data()
        key = storage_pb2.ResourceKey(resource="configmaps", namespace=NAMESPACE, name=NAME)
        try:
            current: Any = await grpcutil.call("storage", self.storage.Get, storage_pb2.GetRequest(key=key),
                                          timeout=TIMEOUT)
        except errors.StatusError as err:
            if err.code != 404:
                raise
            obj = {"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": NAME, "namespace": NAMESPACE, "uid": str(uuid.uuid4()),
                                "creationTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ")},
                   "data": combined({}, required, now)}
            await grpcutil.call("storage", self.storage.Create, storage_pb2.CreateRequest(
                key=key, object=jsonutil.dumps(obj)), timeout=TIMEOUT)
            log.info("created %s/%s", NAMESPACE, NAME)
            return True
        obj = jsonutil.loads(current.object)
        existing = obj.get("data") if isinstance(obj.get("data"), dict) else {}
        data = combined({k: str(v) for k, v in existing.items()}, required, now)
        if data == existing:
            return False
        obj["data"] = data
        await grpcutil.call("storage", self.storage.Update, storage_pb2.UpdateRequest(
            key=key, object=jsonutil.dumps(obj), expected_resource_version=current.resource_version),
            timeout=TIMEOUT)
        log.info("updated %s/%s", NAMESPACE, NAME)
        return True
