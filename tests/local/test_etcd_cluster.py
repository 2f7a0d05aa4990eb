"""``kapi up --etcd-members 3``: a local 3-member etcd cluster from the wheel, storage given every member."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

from kapi.local.launcher import Stack, build_parser
from tests.e2e.test_faults import Client


def _status(address: str) -> dict[str, object]:
    request = urllib.request.Request(f"http://{address}/v3/maintenance/status", data=b"{}",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as reply:
        return dict(json.loads(reply.read()))


def test_flag() -> None:
    assert build_parser().parse_args(["--etcd-members", "3"]).etcd_members == 3
    assert build_parser().parse_args([]).etcd_members == 1


def test_three_members_survive_the_leader(tmp_path: Path) -> None:
    with Stack(tmp_path / "state", port=0, gateways=1, storage_replicas=1, etcd_members=3, controllers=False) as s:
        members = {n: a for n, a in s.addresses.items() if n.startswith("etcd")}
        assert sorted(members) == ["etcd-1", "etcd-2", "etcd-3"]
        storage_argv = " ".join(s.processes["storage-1"].args)  # type: ignore[arg-type]
        assert all(f"http://{a}" in storage_argv for a in members.values()), storage_argv
        statuses = {n: _status(a) for n, a in members.items()}
        leader_id = next(iter(statuses.values()))["leader"]
        leader = next(n for n, st in statuses.items() if st["header"]["member_id"] == leader_id)  # type: ignore[index]
        client = Client(s)
        assert client.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})[0] == 201
        s.kill_process(leader)
        deadline, status = time.monotonic() + 20, 0
        while status != 201:  # a new leader among the other two (writes in flight may wait out etcd's 7 s)
            assert time.monotonic() < deadline, "no write succeeded after the leader died"
            status = client.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "b"}},
                                    timeout=10)[0]
            if status == 409:
                break  # the first attempt committed after all (its answer was lost): it is there
        s.restart_process(leader)  # rejoins with its data
        status, listing = client.request("GET", "/api/v1/namespaces/default/configmaps")
        assert status == 200 and {"a", "b"} <= {i["metadata"]["name"] for i in listing["items"]}
