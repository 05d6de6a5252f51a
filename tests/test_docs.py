"""`fabricgen docs`: per-device pages, the HTML fabric report (opened in a real headless Chromium) and the
validation runbook, from the bundled examples."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from fabricgen.lint import lint
from fabricgen.load.fabric import load
from fabricgen.models.device import Fabric
from fabricgen.report import build_docs, topology
from fabricgen.report.text import Code, md_cell
from fabricgen.resolve import resolve

ROOT = Path(__file__).resolve().parent.parent
MIXED = (ROOT / "intent" / "mixed.yaml", ROOT / "inventory" / "mixed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def docs(tmp_path: Path, intent: Path, inventory: Path, out: str = "docs") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabricgen", "docs", str(intent), "-i", str(inventory), "-o",
                           str(tmp_path / out)], capture_output=True, text=True, check=False, timeout=120)


@pytest.fixture(scope="module")
def mixed_docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("docs")
    done = docs(tmp_path, *MIXED)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"{tmp_path}/docs/: 11 device pages ({tmp_path}/docs/README.md), "
                           f"{tmp_path}/docs/fabric.html, {tmp_path}/docs/runbook.md\n")
    return tmp_path / "docs"


def test_docs_writes_a_page_per_device_an_index_the_report_and_the_runbook(mixed_docs: Path) -> None:
    pages = sorted(path.name for path in (mixed_docs / "devices").iterdir())
    assert pages == [f"{name}.md" for name in ("leaf1", "leaf2", "leaf3", "leaf4", "node1", "node2", "node3",
                                                "node4", "oob1", "spine1", "spine2")]
    assert sorted(path.name for path in mixed_docs.iterdir()) == ["README.md", "devices", "fabric.html",
                                                                   "manifest.json", "runbook.md"]
    index = (mixed_docs / "README.md").read_text()
    assert "| Device | Role | Platform | Ports | Lint |\n|---|---|---|---|---|\n" in index
    assert "| [leaf1](devices/leaf1.md) | leaf | sonic | 5 | clean |" in index


def test_a_switch_page_shows_each_ports_lossless_facts_and_the_qos_matrix(mixed_docs: Path) -> None:
    page = (mixed_docs / "devices" / "leaf1.md").read_text()
    # speed, FEC, peer, cable, MTU, PFC priorities, headroom and who programs it, ECN thresholds
    assert ("| Ethernet0 | host | up | 400G | rs | node1:ens1f0np0 | 2 m dac | 9100 | 3 | 87,040 B / 135,168 B | "
            "the switch (buffermgrd, from the cable length) | q3: 5 KB / 40 KB / 10 % |") in page
    assert "| rdma | 26 | 3 | 3 | 3 | lossless (PFC) | 5 KB / 40 KB / 10 % | DWRR 50 % |" in page
    assert "## How sonic spells it" in page and "WRED\\_PROFILE (ecn\\_all, bytes)" in page
    eos = (mixed_docs / "devices" / "leaf2.md").read_text()
    assert "## How eos spells it" in eos


def test_a_host_page_shows_its_nics_and_nccl_environment(mixed_docs: Path) -> None:
    page = (mixed_docs / "devices" / "node1.md").read_text()
    assert re.search(r"\| ens1f0np0 \| mlx5\\_0 \| leaf1:Ethernet0 \| 2 m \| \d+ \| dscp \| 3 \|", page), page
    assert "| NCCL\\_IB\\_GID\\_INDEX | 3 |" in page


def test_docs_are_deterministic(tmp_path: Path, mixed_docs: Path) -> None:
    again = docs(tmp_path, *MIXED)
    assert again.returncode == 0, again.stderr
    first = {path.relative_to(mixed_docs): path.read_bytes() for path in mixed_docs.rglob("*") if path.is_file()}
    second = {path.relative_to(tmp_path / "docs"): path.read_bytes()
              for path in (tmp_path / "docs").rglob("*") if path.is_file()}
    assert first == second


def test_docs_never_replace_a_folder_fabricgen_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("mine\n")
    done = docs(tmp_path, *MIXED)
    assert done.returncode == 3
    assert "cannot write" in done.stderr and "unchanged" in done.stderr
    assert (tmp_path / "docs" / "notes.txt").read_text() == "mine\n"
    assert sorted(path.name for path in (tmp_path / "docs").iterdir()) == ["notes.txt"]


def test_the_runbook_tests_each_pair_with_the_intents_rdma_device_gid_and_tos(mixed_docs: Path) -> None:
    book = (mixed_docs / "runbook.md").read_text()
    # node1 (ConnectX mlx5) and node3 (bnxt) hang off leaf1; ToS 104 = DSCP 26 with ECN bits 0, GID index 3
    assert "### node1 ↔ node3 (under leaf1)" in book
    assert "ib_write_bw -d mlx5_0 -x 3 --tclass=104 -F --report_gbits\n" in book
    assert "ib_write_bw -d bnxt_re0 -x 3 --tclass=104 -F --report_gbits <address of node1 ens1f0np0>" in book
    assert "### node1 ↔ node2 (leaf1 → leaf2)" in book
    assert "set -a; . /etc/fabricgen/nccl.env; set +a" in book
    for platform in ("connectx", "linux-dcb", "sonic", "eos", "nvue", "nxos"):
        assert f"### {platform} (" in book
    assert "`show queue wredcounters Ethernet0`" in book  # SONiC ECN marks per queue, on a cabled data port
    assert "`show interface priority-flow-control`" in book  # NX-OS
    assert "Source: " in book and "internal" not in book.lower()
    # Step 3 points at the counters fabricgen reads and at the report's health section (always present there).
    assert "`fabricgen health --baseline before-incast`" in book and "[Health](fabric.html#health)" in book
    assert '<h2 id="health">' in (mixed_docs / "fabric.html").read_text()
    assert "`nv show interface swp1 link phy-detail`" in book


def test_markdown_cells_cannot_break_a_table() -> None:
    assert md_cell("a|b\nc`d<e>") == "a\\|b c\\`d&lt;e&gt;"
    assert md_cell(None) == "-"
    assert md_cell(Code("grep -E 'a|b'")) == "`grep -E 'a\\|b'`"


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, str | None]] = []
        self.titles: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "line":
            self.lines.append(dict(attrs))
        self._in_title = tag == "title"

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.titles.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False


def _cables(intent: Path, inventory: Path) -> int:
    loaded = load(intent, inventory)
    fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    ends = {tuple(sorted([(name, port.name), tuple(port.peer.split(":", 1))]))
            for name, device in fabric.devices.items() for port in device.ports if port.peer}
    ends |= {tuple(sorted([(name, nic.interface), tuple(nic.peer.split(":", 1))]))
             for name, device in fabric.devices.items() if device.host for nic in device.host.nics if nic.peer}
    return len(ends)


def test_the_report_draws_every_cable_with_its_port_facts_on_hover(mixed_docs: Path) -> None:
    page = _Elements()
    page.feed((mixed_docs / "fabric.html").read_text())
    assert len(page.lines) == _cables(*MIXED)
    assert any(title.startswith("leaf1 Ethernet0 ↔ node1 ens1f0np0\n400G rs, MTU 9100, cable 2 m dac, PFC 3")
               for title in page.titles), page.titles
    assert {line["class"] for line in page.lines} == {"link ok"}  # the mixed example lints clean


def test_links_are_coloured_by_the_worst_finding_on_either_end(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory)
    hosts = yaml.safe_load((inventory / "hosts.yaml").read_text())
    del hosts["leaf1"]["data"]["ports"]["Ethernet224"]["cable_m"]  # FG-BUF-001 (error) on leaf1:Ethernet224
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    loaded = load(ROOT / "intent" / "fabric.yaml", inventory)
    fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    findings = lint(fabric).findings
    assert any(f.rule == "FG-BUF-001" and f.port == "Ethernet224" for f in findings)
    page = _Elements()
    page.feed(build_docs(fabric, findings)["fabric.html"])
    errors = [line for line in page.lines if line["class"] == "link error"]
    assert [(line["data-a"], line["data-b"]) for line in errors] == [("leaf1", "spine1")]
    assert errors[0]["stroke"] == topology.COLOURS["error"]


def test_a_large_fabric_draws_hosts_as_one_box_per_leaf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(topology, "HOST_LIMIT", 2)
    loaded = load(*MIXED)
    fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    picture = topology.layout(fabric, [])
    hosts = {key: node for key, node in picture.nodes.items() if node.tier == "gpu-host"}
    assert {key: (node.label, node.members) for key, node in hosts.items()} == {
        "hosts under leaf1": ("2 hosts", ["node1", "node3"]), "hosts under leaf2": ("2 hosts", ["node2", "node4"])}
    merged = [edge for edge in picture.edges if edge.a.startswith("hosts") or edge.b.startswith("hosts")]
    assert all(edge.count >= 2 and "cables" in edge.title for edge in merged)


def test_the_report_renders_in_a_real_browser_without_console_errors(mixed_docs: Path, tmp_path: Path) -> None:
    if CHROMIUM is None:
        reason = "Debian's chromium is not installed (.ci/run installs it)"
        if os.environ.get("FABRICGEN_REQUIRE_BROWSER") == "1":
            pytest.fail(f"FABRICGEN_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason=reason)
    done = subprocess.run(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000",
         "--dump-dom", (mixed_docs / "fabric.html").as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == [], console
    # The page's script ran to its end: it marks the body and says how much of the picture it found.
    assert 'data-ready="1"' in done.stdout
    page = _Elements()
    page.feed((mixed_docs / "fabric.html").read_text())
    assert f">11 boxes, {len(page.lines)} cable lines drawn<" in done.stdout


def _example() -> Fabric:
    loaded = load(ROOT / "intent" / "fabric.yaml", ROOT / "inventory")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


def test_each_box_names_its_platform(mixed_docs: Path) -> None:
    html = (mixed_docs / "fabric.html").read_text()
    for device, nos in (("leaf1", "SONiC"), ("leaf2", "Arista EOS"), ("leaf3", "Cumulus NVUE"),
                        ("leaf4", "Cisco NX-OS"), ("node1", "ConnectX host"), ("node3", "Linux dcb host")):
        assert re.search(rf'data-name="{device}">.*?<text class="platform"[^>]*>{nos}</text>', html), device


def test_parallel_cables_are_drawn_apart_each_with_its_own_facts() -> None:
    fabric = _example()  # leaf1 reaches spine1 twice: Ethernet224 ↔ Ethernet1/1 and Ethernet232 ↔ Ethernet2/1
    page = _Elements()
    page.feed(topology.svg(topology.layout(fabric, [])))
    pair = [line for line in page.lines if {line["data-a"], line["data-b"]} == {"leaf1", "spine1"}]
    assert len(pair) == 2
    assert len({(line["x1"], line["x2"]) for line in pair}) == 2, "the two cables do not overlap"
    titles = [title for title in page.titles if title.startswith(("leaf1 Ethernet224 ↔", "leaf1 Ethernet232 ↔"))]
    assert sorted(title.splitlines()[0] for title in titles) == ["leaf1 Ethernet224 ↔ spine1 Ethernet1/1",
                                                                "leaf1 Ethernet232 ↔ spine1 Ethernet2/1"]
    assert all(title.splitlines()[-1] == "lint: clean" for title in titles)


def test_port_labels_where_they_fit_and_the_drawing_uses_the_page(mixed_docs: Path) -> None:
    html = (mixed_docs / "fabric.html").read_text()
    labels = re.findall(r'<text class="port"[^>]*>([^<]+)</text>', html)
    assert {"Ethernet224", "ens1f0np0", "swp63", "Ethernet1/63"} <= set(labels)
    assert re.search(r'<svg [^>]*id="topology"[^>]*width="100%"', html)


def test_the_header_counts_waived_findings_apart(mixed_docs: Path) -> None:
    loaded = load(*MIXED)
    waived = len(lint(resolve(loaded.intent, loaded.inventory, loaded.locate)).waived)
    assert waived > 0
    html = (mixed_docs / "fabric.html").read_text()
    assert f'<span class="waived">{waived} waived (not counted above)</span>' in html
    assert '<span class="error">0 errors</span>' in html


def test_tables_say_why_a_platform_is_absent(mixed_docs: Path) -> None:
    html = (mixed_docs / "fabric.html").read_text()
    assert ('Not in this table: ConnectX host — GPU hosts: a NIC has no switch ingress headroom to size (its PFC '
            "buffer is the NIC&#39;s own).") in html
    assert "No counter history beside this fabric" in html  # and the health section says why it is empty


def test_the_report_shows_latest_health_and_trends_from_the_history(tmp_path: Path) -> None:
    from fabricgen.observe.model import DeviceSnapshot, Snapshot, reading
    from fabricgen.observe.store import History

    history = History(tmp_path / "observe.sqlite")
    for t in range(4):  # leaf1:Ethernet224's uncorrectable FEC count grows 0, 5, 20, 45
        readings = [reading("leaf1", "Ethernet224", "fec_uncorrected", 5 * t * t),
                    reading("leaf1", "Ethernet232", "fec_uncorrected", 0),
                    reading("leaf1", "Ethernet224", "pfc_tx_pause", 100 * t, 3),  # pausing, and no ECN mark:
                    reading("leaf1", "Ethernet224", "queue_ecn_marked", 0, 3)]
        history.add(Snapshot(1_800_000_000.0 + 60 * t, {"leaf1": DeviceSnapshot("leaf1", "sonic", readings)}))
    history.close()
    done = subprocess.run([sys.executable, "-m", "fabricgen", "docs", str(ROOT / "intent" / "fabric.yaml"), "-i",
                           str(ROOT / "inventory"), "-o", str(tmp_path / "docs"), "--history",
                           str(tmp_path / "observe.sqlite")], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "docs" / "fabric.html").read_text()
    assert "Latest counters: 1 error(s), 1 warning(s) over the last 60 s (snapshots 3 → 4, 4 in the history)" in html
    row = re.search(r'<tr class="error"><td>leaf1:Ethernet224 ↔ spine1:Ethernet1/1</td><td>error</td>'
                    r"<td>(.*?)</td>(.*?)</tr>", html)
    assert row is not None and row.group(1) == "FG-OBS-101, FG-OBS-301"
    # The errors plot: increases per interval 5, 15, 25 (latest 25), drawn inline, nothing fetched.
    assert "per interval: 5, 15, 25</title>" in row.group(2) and "<polyline" in row.group(2)
    assert "\nhealth: error" in html  # the cable's hover text in the picture


def test_a_history_that_is_not_one_is_refused_by_docs(tmp_path: Path) -> None:
    bad = tmp_path / "observe.sqlite"
    bad.write_text("no" * 1000)
    done = subprocess.run([sys.executable, "-m", "fabricgen", "docs", str(ROOT / "intent" / "fabric.yaml"), "-i",
                           str(ROOT / "inventory"), "-o", str(tmp_path / "docs"), "--history", str(bad)],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 2 and "observe.sqlite: not a fabricgen observe history" in done.stderr
    assert not (tmp_path / "docs").exists()
