"""SONiC: the capability record — what fabricgen can express on it, its limits and how it deploys — and the vendor
facts the record rests on."""

from __future__ import annotations

from fabricgen.platforms import Capability
from fabricgen.resolve.headroom import DEFAULT_SONIC_RELEASE, SONIC_RELEASES

OWNED_TABLES = (
    "PORT", "PORT_QOS_MAP", "DSCP_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE", "WRED_PROFILE", "SCHEDULER", "QUEUE", "BUFFER_PROFILE", "BUFFER_PG",
    "CABLE_LENGTH", "LOSSLESS_TRAFFIC_PATTERN", "PFC_WD", "MGMT_PORT", "MGMT_INTERFACE", "MGMT_VRF_CONFIG",
)

# How many lossless priorities a SKU's buffer templates provision PGs for (sonic-buildimage
# device/<vendor>/<platform>/<SKU>/buffers_defaults_*.j2). A SKU without PG macros of its own runs
# files/build_templates/buffers_config.j2's lossless PGs 3-4: two, lossless_class_limit. Listed: SKUs whose files say
# otherwise, with the file and commit read. Any other SKU is unknown, never guessed: the inventory declares it.
SKU_LOSSLESS_LIMITS: dict[str, int] = {
    # device/mellanox/x86_64-mlnx_msn4700-r0/Mellanox-SN4700-O28/buffers_defaults_objects.j2 (commit 5b13506):
    # generate_pg_profiles_with_extra_lossless_pgs gives ports with extra lossless queues (DualToR or
    # tunnel_qos_remap) PGs 2-4 and 6, and generate_queue_buffers_with_extra_lossless_queues queues 2-4 and 6.
    "Mellanox-SN4700-O28": 4,
}

CAPABILITY = Capability(
    name="sonic",
    kind="switch",
    target=f"SONiC {DEFAULT_SONIC_RELEASE} or later (config_db.json; YANG models of sonic-buildimage); headroom per "
           f"release {min(SONIC_RELEASES)}-{max(SONIC_RELEASES)}",
    max_mtu=9216,
    mgmt_mtu_range=(1500, 9216),  # sonic-mgmt_port.yang: leaf mtu, range "1500..9216" (202411, 202511)
    mtu_semantics="l3",
    lossless_class_limit=2,  # buffers_config.j2's lossless PGs 3-4; per SKU: lossless_limit_per_sku
    lossless_limit_per_sku=SKU_LOSSLESS_LIMITS,
    ecn_threshold_unit="bytes",
    ecn_granularity_bytes=1,
    programs_headroom=True,
    headroom_from_cable=True,  # the buffer profile (fabricgen's or buffermgrd's) is sized from CABLE_LENGTH
    mgmt_interface="eth0",
    mgmt_vrf_fixed_name="mgmt",  # interfaces.j2 always builds Linux VRF `mgmt` (table 6000)
    watchdog_step_ms=1,
    watchdog_actions=("drop", "forward", "alert"),
    owned_sections=OWNED_TABLES,
    commit_strategy="GCU over SSH: an RFC 6902 patch of the owned tables and fields (never lanes/alias), checked "
                    "with config apply-patch --dry-run; config checkpoint fabricgen-<run> → config apply-patch with a "
                    "revert timer on the switch (config rollback fabricgen-<run>; systemd-run, else setsid) → "
                    "confirm: config save -y, then the timer cancelled",
    napalm_driver="fabricgen_sonic",
    deploy={
        "diff": "show runningconfiguration all → the push the switch's release accepts (VERSIONS|DATABASE): an RFC "
            "6902 patch of the owned tables and fields, pfcwd commands, what stays the switch's and the ports it "
            "bounces, checked against GCU's field rules of that release, then config apply-patch --dry-run on a file "
            "uploaded by SFTP (removed after)",
        "commit": "config checkpoint fabricgen-<run>, a systemd-run (else setsid) timer that runs config rollback "
            "fabricgen-<run>, then config apply-patch (and pfcwd start/interval) under the timer's lock. GCU's "
            "sorter grows with the square of the ports the patch names: measured with bench/gcu_sorter.py (202511, "
            "GCU's own dry run, a loaded 2-core machine) 1/2/4/8 ports (33/51/87/163 operations) 18.9/53.3/185.1/"
            "788.5 s CPU, under 12 n² + 8 n s; each dry run and apply is time-limited to 120 s + 4 × (12 n² + 8 n) "
            "s for n ports (200 s for 1, 1,016 s for 4, 3,448 s for 8), at most 3,600 s (the longest "
            "--confirm-timeout), reached from 9 ports on: give --confirm-timeout room for the apply, and push a "
            "many-port leaf's first change in port groups",
        "confirm": "under the switch's lock, only the run's own commit: config save -y first, then the timer "
                   "cancelled (a failed save leaves it pending, its timer armed); its fate recorded on the switch",
        "rollback": "a pending commit: config rollback fabricgen-<run>; a confirmed one: the inverse patch at the "
            "paths its patch touched (later changes by others stay)",
        "save": "config save -y on confirm",
        "limits": "GCU field rules (sonic-utilities gcu_field_operation_validators.conf.json): 202411: WRED_PROFILE "
            "only AZURE_LOSSLESS's green_min/max_threshold and green_drop_probability by replace, so the lossless "
            "profile is the switch's own (its ecn mode, enables, yellow/red stay and are listed in the diff); "
            "BUFFER_PROFILE only dynamic_th/xoff of an existing profile (a new lossless profile of the traditional "
            "buffer model needs config reload); BUFFER_POOL sizes only. 202505: the same, any existing WRED profile's "
            "green fields. 202511: WRED_PROFILE and whole BUFFER_PROFILEs free, BUFFER_POOL not at all. Every "
            "release: a switch without a PFC_WD table gets its watchdog by pfcwd start/interval (GCU refuses "
            "add /PFC_WD); PORT fec/speed only as STATE_DB lists them",
        "disruption": "GCU's sorter takes every up port whose QUEUE, PORT_QOS_MAP, BUFFER_PG (BUFFER_QUEUE, buffer "
            "profile lists) rows change admin-down and up again (patch_sorter.py RequiredValueIdentifier): diff "
            "(--format json: bounced), plan and the push prompt name them; push needs --allow-disruptive; push waves "
            "never hold two such leaves of one GPU host; a rollback bounces them again, names them before it acts "
            "and needs --allow-disruptive or a yes when asked",
        "lab": "real: OpenSSH, SFTP, redis-server holding CONFIG_DB/STATE_DB, sonic-utilities' generic_config_updater "
            "of 202411/202505/202511 (sonic-net/sonic-utilities release branches) with each release's YANG models "
            "(202505: 202411's, the closest set at hand); adapted "
            "(tests/targets/sonic_gcu.py): swsscommon's connector over redis-py, sonic-cfggen, device_info, "
            "sonic_yang on libyang 2; emulated: show, config save, pfcwd in tests/targets/sonic.py",
    },
    output_files=("config_db.json",),
    port_settings=("admin_up", "mtu", "speed_mbps", "fec", "lanes", "description", "access_vlan", "tagged_vlans",
                   "mode", "pfc_priorities", "lossless", "cable_m", "headroom", "qos"),
    port_anchor=r'"PORT"\s*:',  # the PORT table: BUFFER_PG, CABLE_LENGTH and PFC_WD name ports before it
    config_words={
        "admin_up": "{port} > admin_status", "mtu": "{port} > mtu", "speed_mbps": "{port} > speed",
        "fec": "{port} > fec",
        "lanes": "{port} > lanes", "description": "{port} > description", "mode": "{port} > mode",
        "cable_m": "CABLE_LENGTH > {port}", "headroom": "BUFFER_PG > {port}",
        "pfc_priorities": "PORT_QOS_MAP > {port} > pfc_enable", "lossless": "PORT_QOS_MAP > {port} > pfc_enable",
        "qos": "PORT_QOS_MAP > {port}", "qos.watchdog": "PFC_WD > {port}", "qos.queues": "QUEUE > {port}",
        "access_vlan": "VLAN_MEMBER > {port}", "tagged_vlans": "VLAN_MEMBER > {port}",
    },
    device_words={
        "qos": "PORT_QOS_MAP", "qos.lossless_priorities": "PORT_QOS_MAP", "qos.dscp_to_tc": "DSCP_TO_TC_MAP",
        "qos.tc_to_queue": "TC_TO_QUEUE_MAP", "qos.tc_to_pg": "TC_TO_PRIORITY_GROUP_MAP",
        "qos.pfc_priority_to_queue": "MAP_PFC_PRIORITY_TO_QUEUE", "qos.queues": "QUEUE",
        "qos.queues.ecn": "WRED_PROFILE", "qos.watchdog": "PFC_WD", "qos.lossless_pool": "BUFFER_POOL",
    },
    spelling={
        "trust": "PORT_QOS_MAP|<port>.dscp_to_tc_map (DSCP trust is implied)",
        "dscp_map": "DSCP_TO_TC_MAP|ROCE (all 64 code points)",
        "queue_map": "TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP, MAP_PFC_PRIORITY_TO_QUEUE",
        "pfc": "PORT_QOS_MAP|<port>.pfc_enable",
        "pfc_watchdog": "PFC_WD|<port> + PFC_WD|GLOBAL.POLL_INTERVAL, pfcwd_sw_enable",
        "headroom": "traditional buffer model: BUFFER_PROFILE pg_lossless_<speed>_<cable>_profile, BUFFER_PG, "
                    "CABLE_LENGTH; dynamic: CABLE_LENGTH and LOSSLESS_TRAFFIC_PATTERN (buffermgrd computes it)",
        "ecn": "WRED_PROFILE (ecn_all, bytes) on QUEUE|<port>|<q>",
        "scheduling": "SCHEDULER type STRICT / DWRR weight on QUEUE",
        "mtu": "PORT.mtu",
        "mgmt": "MGMT_VRF_CONFIG (VRF mgmt), MGMT_INTERFACE, MGMT_PORT",
        "vlans": "VLAN_MEMBER|Vlan<id>|<port> tagging_mode untagged (access) or tagged; PORT.mode routed|access|trunk "
                 "(read back; fabricgen's data ports are routed and render none)",
    },
)
