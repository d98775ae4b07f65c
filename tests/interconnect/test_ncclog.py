"""Tests of ampere.interconnect.ncclog: reading NCCL_DEBUG=INFO logs and the troubleshooting table.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import pytest

from ampere import interconnect as ic


def test_the_published_excerpt_reads_as_the_chapter_says():
    log = ic.parse_nccl_log(ic.log_excerpt())
    assert log.version.startswith("2.8.3") and log.network == "AWS Libfabric" and log.coll_channels == 8
    assert len(log.rings) == 8 and all(len(r) == 16 and sorted(r) == list(range(16)) for r in log.rings.values())
    assert "P2P/IPC/read" in log.transports()
    net = log.network_connections()
    assert net and all(c.gdr and c.direction == "send" for c in net)
    assert sorted({c.nic for c in net}) == [0, 1, 2, 3]
    rails = ic.ring_rails(log, 8)
    assert [r["rail_aligned"] for r in rails[:4]] == [True] * 4 and [r["nics"] for r in rails[:4]] == [[0], [1], [2], [3]]
    assert all(r["rail_aligned"] is None for r in rails[4:])  # their connections are not in the excerpt
    assert all(len(r["crossings"]) == 2 for r in rails)
    # trees: rank 2 is a link of the chain (child 3, parent 1) except in the trees it roots
    assert log.trees[(2, 0)] == ((3,), 1) and log.trees[(2, 1)] == ((3, 10), -1)


def test_parse_handles_other_transports_and_refuses_non_strings():
    text = "\n".join([
        "host:1:2 [0] NCCL INFO Channel 00/02 :    0   1   2   3",
        "host:1:2 [0] NCCL INFO Channel 00 : 0[7] -> 1[f] via SHM/direct",
        "host:1:2 [1] NCCL INFO Channel 00/0 : 1[f] -> 2[47] [send] via NET/IB/3/GDRDMA",
        "host:1:2 [2] NCCL INFO Channel 00/0 : 3[4e] -> 0[7] [receive] via NET/IB/1",
        "host:1:2 [0] NCCL INFO Channel 00/0 : 2[47] -> 3[4e] via NET/Socket/0",
        "something else entirely",
    ])
    log = ic.parse_nccl_log(text)
    by = {(c.src, c.dst): c for c in log.connections}
    assert by[(0, 1)].transport == "SHM/direct" and by[(0, 1)].nic is None and not by[(0, 1)].network
    assert by[(1, 2)].nic == 3 and by[(1, 2)].gdr
    assert by[(3, 0)].nic == 1 and not by[(3, 0)].gdr and by[(3, 0)].direction == "receive"
    assert by[(2, 3)].transport.startswith("NET/Socket") and not by[(2, 3)].gdr
    rails = ic.ring_rails(log, 2)  # ranks 0-1 on node 0, 2-3 on node 1: crossings 1->2 (NIC 3) and 3->0 (NIC 1)
    assert rails[0]["nics"] == [1, 3] and rails[0]["rail_aligned"] is False
    assert ic.parse_nccl_log([]) == ic.NcclLog()
    with pytest.raises(TypeError, match=r"lines\[0\] must be a string"):
        ic.parse_nccl_log([b"bytes"])
    with pytest.raises(TypeError, match="NcclLog"):
        ic.ring_rails({}, 8)
    with pytest.raises(ValueError, match="gpus_per_node"):
        ic.ring_rails(log, 0)


def test_troubleshooting_rows_have_every_column_and_a_label():
    from .test_rows import _bib_keys

    rows = ic.troubleshooting_rows("all")
    assert len(rows) >= 8
    cols = {"symptom", "what the log shows", "cause", "fix", "variable", "source"}
    assert all(set(r) == cols and all(r.values()) for r in rows)
    page = ic.troubleshooting_rows()
    assert all(set(r) == {"symptom", "what the log shows", "cause, fix (source)"} for r in page)
    assert all(". Fix: " in r["cause, fix (source)"] and r["cause, fix (source)"].endswith(")") for r in page)
    assert len(page) == len(rows)
    with pytest.raises(ValueError, match="columns"):
        ic.troubleshooting_rows("wide")
    keys = _bib_keys()
    assert not any(r["source"] in keys for r in rows)
    shown = " ".join(r["what the log shows"] for r in rows)
    for token in ("NET/Socket", "GDRDMA", "P2P/IPC", "NET/IB", "NCCL_PROTO"):
        assert token in shown
