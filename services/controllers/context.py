"""What the reconcile loops share: :class:`Context`, built once by the controller manager and handed to each loop.

Loops import this module, never the manager (which imports every loop).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from kapi.resources import Resource
from services.controllers.client import Client, path_for
from services.controllers.informer import Informer


@dataclass
class Context:
    """What loops share: the API client, flags, the cluster CA (PEM) and one informer per collection path."""

    client: Client
    args: argparse.Namespace
    root_ca: bytes = b""
    resync: float = 300.0
    informers: dict[str, Informer] = field(default_factory=dict)
    shared: dict[str, object] = field(default_factory=dict)  # per-context singletons (e.g. customresources.shared)

    def informer(self, resource: Resource, namespace: str = "") -> Informer:
        """The shared informer of ``resource`` (in ``namespace``, or every namespace)."""
        path = path_for(resource, namespace)
        if path not in self.informers:
            self.informers[path] = Informer(self.client, path, resync=self.resync)
        return self.informers[path]
