"""Cisco NX-OS: the capability record — what fabricgen can express on it, its limits and how it deploys — and the
vendor facts the record rests on."""

from __future__ import annotations

from fabricgen.platforms import Capability

FILE = "nxos.cfg"
QOS_POLICY = "FABRICGEN_QOS"  # policy-map type qos, input on every data port
NETWORK_POLICY = "FABRICGEN_NETWORK_QOS"  # policy-map type network-qos, system qos
QUEUING_POLICY = "FABRICGEN_QUEUING"  # policy-map type queuing, system qos output
MGMT_VRF = "management"  # NX-OS: mgmt0 always lives in VRF `management`; the name cannot be chosen
CAPABILITY = Capability(
    name="nxos",
    kind="switch",
    target="Cisco NX-OS 10.3(x) standalone, Nexus 9000 Cloud Scale (e.g. N9K-C9364D-GX2A), default 8q queuing "
           "mode (CLI; syntax of the Azure Local reference ToR QoS policy, tested there on 10.3.x)",
    max_mtu=9216,  # interface and network-qos MTU (the Azure Local reference ToR QoS policy)
    mtu_semantics="l3",  # interface `mtu` counts the IP packet (routed ports), like EOS and SONiC
    # How many no-drop classes at once is platform-limited and no Cisco document here states the number.
    # Conservative choice: the one no-drop class every public reference config sets (c-8q-nq3).
    lossless_class_limit=1,
    ecn_threshold_unit="bytes (`random-detect minimum-threshold N bytes`: the intent's value, exact)",
    ecn_granularity_bytes=1,
    programs_headroom=False,  # buffer carving follows the network-qos MTU; no per-port headroom knob
    mgmt_interface="mgmt0",
    mgmt_vrf_fixed_name=MGMT_VRF,
    # `priority-flow-control watch-dog interval` is in ms (100-1000); detection and restoration are
    # interval × shutdown-/restore-multiplier (keyword spellings not confirmed by a Cisco document here).
    # 100 ms steps: the coarsest granularity any source shows, so every accepted value is one the CLI takes.
    watchdog_step_ms=100,
    # A stuck no-drop queue is shut and its packets dropped; no forward or alert-only mode is documented.
    watchdog_actions=("drop",),
    watchdog_timers_in_polls=("detection_ms", "restoration_ms"),
    owned_sections=(
        "class-map type qos FG_*", f"policy-map type qos {QOS_POLICY}", f"policy-map type queuing {QUEUING_POLICY}",
        f"policy-map type network-qos {NETWORK_POLICY}", "system qos (network-qos and queuing service-policies)",
        "priority-flow-control watch-dog (global)", "vlan <management vlan> (oob)",
        f"vrf context {MGMT_VRF}: default route",
        "interface Ethernet*: description, shutdown, switchport mode (routed data ports, access on oob), mtu, speed "
        "and fec (data ports), priority-flow-control mode and watch-dog-interval, service-policy type qos input",
        "interface mgmt0: vrf member, ip/ipv6 address, mtu",
    ),
    napalm_driver="fabricgen_nxos",
    deploy={
        "diff": "the running-config with nxos.cfg's owned sections spliced in, uploaded to bootflash: by SFTP, show "
            "diff rollback-patch file … file …, the files removed",
        "commit": "checkpoint fabricgen-<run>, then configure replace bootflash:fabricgen-<run>.cfg commit-timeout "
            "<30-3600 s>",
        "confirm": "configure replace commit, then copy running-config startup-config",
        "rollback": "rollback running-config checkpoint fabricgen-<run> (a pending replace is committed first so its "
            "timer cannot fire mid-way), then saved",
        "save": "copy running-config startup-config on confirm",
        "lab": "real: NX-API over HTTPS (NAPALM's nxos driver, certificate pinned), SFTP; emulated: the NX-OS CLI, "
            "checkpoints, configure replace and its timer in tests/targets/nxos.py",
    },
    commit_strategy="NX-API: checkpoint fabricgen-<run> → the running config with nxos.cfg's owned sections spliced "
                    "in, to bootflash: over SFTP → show diff rollback-patch (diff) → configure replace <file> "
                    "commit-timeout <s> (NX-OS rolls back by itself unless confirmed) → configure replace commit → "
                    "copy running-config startup-config; rollback: rollback running-config checkpoint fabricgen-<run>",
    output_files=(FILE,),
    # The reader's per-port view (reader.owned): mode on data and OOB access ports, trunk VLANs on every port,
    # mtu, speed, FEC, PFC and the port's own QoS (classification, queuing, watchdog where they differ) on data
    # ports.
    port_settings=("admin_up", "description", "access_vlan", "mode", "tagged_vlans", "mtu", "speed_mbps", "fec",
                   "pfc_priorities", "lossless", "qos"),
    port_anchor=r"^[ \t]*interface {port}[ \t]*$",
    config_words={
        "admin_up": "{port} > shutdown", "mtu": "{port} > mtu", "speed_mbps": "{port} > speed", "fec": "{port} > fec",
        "description": "{port} > description", "mode": "{port} > switchport", "access_vlan": "{port} > switchport",
        "tagged_vlans": "{port} > switchport", "pfc_priorities": "{port} > priority-flow-control",
        "lossless": "{port} > priority-flow-control", "qos": "{port} > service-policy",
        "qos.queues": "{port} > queuing",
    },
    device_words={
        "qos.dscp_to_tc": "policy-map type qos", "qos.trust": "policy-map type qos",
        "qos.queues": "policy-map type queuing",
        "qos.queues.ecn": "policy-map type queuing > random-detect", "qos.lossless_priorities":
        "policy-map type network-qos", "qos.watchdog": "priority-flow-control watch-dog",
    },
    spelling={
        "trust": f"service-policy type qos input {QOS_POLICY} on data ports (DSCP class-maps)",
        "dscp_map": "class-map type qos match-all … match dscp …; policy-map type qos: set qos-group N",
        "queue_map": "qos-group N = 8q system classes c-8q-nqN / c-out-8q-qN (qos-group = egress queue)",
        "pfc": "network-qos c-8q-nqN: pause pfc-cos P; interface priority-flow-control mode on",
        "pfc_watchdog": "priority-flow-control watch-dog-interval on, watch-dog interval / shutdown-multiplier / "
                        "restore-multiplier (timers must be multiples of the poll interval)",
        "headroom": "platform buffer carving (network-qos mtu): not rendered",
        "ecn": "random-detect minimum-threshold … bytes maximum-threshold … bytes drop-probability P weight 0 ecn",
        "scheduling": "queuing class: priority level N | bandwidth remaining percent W",
        "mtu": "routed data ports: no switchport + mtu N (per-port L3 MTU); a switched port: mtu 1500 or the "
               "system jumbomtu (9216) only; network-qos class mtu 9216",
        "mgmt": "interface mgmt0 vrf member management; vrf context management ip route 0.0.0.0/0",
    },
)


# --- naming and numbers shared with the reader ------------------------------------------------------------
