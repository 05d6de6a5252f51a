"""Arista EOS: the capability record — what fabricgen can express on it, its limits and how it deploys — and the
vendor facts the record rests on."""

from __future__ import annotations

from fabricgen.platforms import Capability

CAPABILITY = Capability(
    name="eos",
    kind="switch",
    target="Arista EOS 4.30 or later (CLI; layout of pyavd 6.4 / EOS 4.35 running-config)",
    max_mtu=9214,
    mtu_semantics="l3",
    lossless_class_limit=2,
    ecn_threshold_unit="bytes",
    ecn_granularity_bytes=1,
    programs_headroom=False,  # Jericho: FADT; Trident: `platform trident mmu` profiles, not per-port headroom
    mgmt_interface="Management1",
    mgmt_vrf_fixed_name=None,
    watchdog_step_ms=10,  # `timeout`/`recovery-time` take two decimals of a second
    watchdog_actions=("drop", "alert"),  # EOS: drop | errdisable | notify-only; no "forward"
    owned_sections=("qos profile FABRICGEN_ROCE", "qos map", "priority-flow-control pause watchdog (global)",
                    "vlan <management vlan> (oob)", "vrf instance <management vrf>",
                    "interface Ethernet*: description, shutdown, mtu / l2 mtu, speed and error-correction encoding "
                    "(data ports), switchport mode (routed data ports, access on oob), access vlan (oob), "
                    "service-profile; read back: trunk VLANs, qos trust and tx-queue ECN lines of a port",
                    "interface Management*", "ip route vrf <management vrf> 0.0.0.0/0"),
    napalm_driver="fabricgen_eos",
    deploy={
        "diff": "the running-config with eos.cfg's owned sections spliced in, loaded into an eAPI config session: its "
            "session diff, then the session aborted",
        "commit": "configure checkpoint save fabricgen-<run>, then the session committed with commit timer hh:mm:ss "
            "and, in the same eAPI request, the record checkpoint fabricgen-<run>.committed",
        "confirm": "only the run's own pending session committed again (timer cancelled), the record "
            "fabricgen-<run>.confirmed, then write memory, in one eAPI request; its fate read back from the switch "
            "(its config sessions and those records: pending, confirmed, reverted, reverted-by-timer, absent)",
        "rollback": "a pending commit: the session aborted; a confirmed one: configure replace "
            "checkpoint:fabricgen-<run>; each with the record fabricgen-<run>.reverted (a commit already reverted, "
            "by its timer or a rollback, is left as it is)",
        "save": "write memory on confirm",
        "lab": "real: HTTPS with basic auth and the certificate checked, NAPALM's eos driver and pyeapi; emulated: "
            "EOS's CLI, config sessions, commit timer, checkpoints in tests/targets/eos.py",
    },
    commit_strategy="NAPALM eos over eAPI (fabricgen_eos): running-config with the owned sections spliced in → "
                    "config session (rollback clean-config + that candidate), its session-config diff → configure "
                    "checkpoint save fabricgen-<run> → commit timer (the switch rolls back unless confirmed) → "
                    "confirm: commit + write memory; rollback: abort, or configure replace checkpoint:fabricgen-<run>",
    output_files=("eos.cfg",),
    # The reader's per-port view (reader.owned): mode on data and OOB access ports; mtu, speed, FEC, PFC and the
    # QoS in effect (`qos`: the trust, queues and watchdog of the port's own profile and lines where they differ
    # from the device's) on data ports; VLAN membership, access and trunk, on every port.
    port_settings=("admin_up", "description", "access_vlan", "tagged_vlans", "mode", "mtu", "speed_mbps", "fec",
                   "pfc_priorities", "lossless", "qos"),
    port_anchor=r"^[ \t]*interface {port}[ \t]*$",
    config_words={
        "admin_up": "{port} > shutdown", "mtu": "{port} > mtu", "speed_mbps": "{port} > speed",
        "fec": "{port} > error-correction", "description": "{port} > description", "mode": "{port} > switchport",
        "access_vlan": "{port} > switchport", "tagged_vlans": "{port} > switchport",
        "pfc_priorities": "{port} > priority-flow-control", "lossless": "{port} > priority-flow-control",
        "qos": "{port} > service-profile", "qos.trust": "{port} > trust", "qos.queues": "{port} > tx-queue",
    },
    device_words={
        "qos": "qos profile", "qos.trust": "qos profile > qos trust", "qos.queues": "qos profile > tx-queue",
        "qos.queues.ecn": "qos profile > random-detect ecn", "qos.lossless_priorities": "qos profile > no-drop",
        "qos.watchdog": "priority-flow-control pause watchdog default", "qos.dscp_to_tc": "qos map dscp",
        "qos.tc_to_queue": "qos map traffic-class",
    },
    spelling={
        "trust": "qos trust dscp (in qos profile; a port's own qos trust line overrides it)",
        "dscp_map": "qos map dscp … to traffic-class N",
        "queue_map": "qos map traffic-class N to tx-queue|uc-tx-queue M",
        "pfc": "priority-flow-control on + priority N no-drop (qos profile, service-profile on ports)",
        "pfc_watchdog": "priority-flow-control pause watchdog default timeout/recovery-time/polling-interval, action",
        "headroom": "platform-managed (Jericho FADT / Trident MMU profiles): not rendered",
        "ecn": "random-detect ecn minimum-threshold … bytes maximum-threshold … bytes max-mark-probability P",
        "scheduling": "tx-queue N: priority strict | no priority + bandwidth percent W",
        "mtu": "routed data ports: no switchport + mtu N (EOS `mtu` is the L3 MTU); a switched port: l2 mtu N "
               "(its frames ignore `mtu`)",
        "mgmt": "vrf instance, interface Management1 vrf …, ip route vrf … 0.0.0.0/0",
    },
)
