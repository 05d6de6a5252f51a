"""SONiC YANG validation of config_db dicts against the real SONiC models (the vendor data's sonic-yang).

The clean baseline is the 2-port RoCEv2 lossless example of shared/reference/sonic.md §1; every
negative case breaks exactly one thing in a copy of it and checks that the issue names the table.
The models are passed explicitly: the shared copy beside this repository (sonic-buildimage master, see its
SOURCE_COMMIT; tests/conftest.py ``requires_shared``). No product default points there.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from fabricgen.validate.sonic_yang import (
    SonicYangValidator,
    YangIssue,
    YangUnavailable,
    validate_file,
)

from conftest import shared_path

pytestmark = pytest.mark.requires_shared("sonic-yang")  # every test here reads the models
MODELS = shared_path("sonic-yang")


def require_libyang() -> None:
    try:
        importlib.import_module("libyang")
    except (ImportError, OSError) as exc:  # OSError: binding installed but libyang.so.2 missing
        reason = f"needs libyang: pip install 'fabricgen[yang]' and apt-get install libyang2-dev ({exc})"
        if os.environ.get("FABRICGEN_REQUIRE_YANG") == "1":  # CI: a skip here would be a silent pass
            pytest.fail(f"FABRICGEN_REQUIRE_YANG=1 but {reason}", pytrace=False)
        pytest.skip(reason=reason)


PORTS = ("Ethernet0", "Ethernet8")


def _per_port(make: Any) -> dict[str, Any]:
    return {key: value for port in PORTS for key, value in make(port).items()}


def example_config() -> dict[str, Any]:
    """sonic.md §1 "Example: 2-port RoCEv2 lossless config" (validates clean on master models)."""
    roce_port_qos = {
        "dscp_to_tc_map": "ROCE",
        "tc_to_pg_map": "ROCE",
        "tc_to_queue_map": "ROCE",
        "pfc_to_queue_map": "ROCE",
        "pfc_enable": "3",
        "pfcwd_sw_enable": "3",
    }
    wred_colours = {
        f"{colour}_{what}": value
        for colour in ("green", "yellow", "red")
        for what, value in (
            ("min_threshold", "1048576"),
            ("max_threshold", "2097152"),
            ("drop_probability", "5"),
        )
    }
    return {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": "leaf01",
                "hwsku": "Arista-7060X6-64PE-B-O128",
                "platform": "x86_64-arista_7060x6_64pe_b",
                "mac": "00:11:22:33:44:55",
                "type": "BackEndLeafRouter",
                "bgp_asn": "65101",
                "buffer_model": "traditional",
                "default_pfcwd_status": "enable",
            }
        },
        "PORT": {
            port: {
                "alias": f"etp{index}",
                "lanes": ",".join(str(lane) for lane in range(8 * index - 7, 8 * index + 1)),
                "index": str(index),
                "speed": "400000",
                "fec": "rs",
                "mtu": "9100",
                "admin_status": "up",
            }
            for index, port in enumerate(PORTS, start=1)
        },
        "DSCP_TO_TC_MAP": {"ROCE": {"0": "0", "8": "0", "24": "0", "26": "3", "46": "5", "48": "6"}},
        "TC_TO_PRIORITY_GROUP_MAP": {"ROCE": {str(tc): str(tc) if tc in (3, 7) else "0" for tc in range(8)}},
        "TC_TO_QUEUE_MAP": {"ROCE": {str(tc): str(tc) for tc in range(8)}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {"ROCE": {str(prio): str(prio) for prio in range(8)}},
        "PORT_QOS_MAP": {
            "global": {"dscp_to_tc_map": "ROCE"},
            **{port: dict(roce_port_qos) for port in PORTS},
        },
        "WRED_PROFILE": {
            "ROCE_LOSSLESS": {
                "ecn": "ecn_all",
                "wred_green_enable": "true",
                "wred_yellow_enable": "true",
                "wred_red_enable": "true",
                **wred_colours,
            }
        },
        "SCHEDULER": {
            "scheduler.0": {"type": "DWRR", "weight": "14"},
            "scheduler.1": {"type": "DWRR", "weight": "15"},
            "scheduler.cnp": {"type": "STRICT"},
        },
        "QUEUE": _per_port(
            lambda port: {
                f"{port}|0": {"scheduler": "scheduler.0"},
                f"{port}|1": {"scheduler": "scheduler.0"},
                f"{port}|3": {"scheduler": "scheduler.1", "wred_profile": "ROCE_LOSSLESS"},
                f"{port}|6": {"scheduler": "scheduler.cnp"},
            }
        ),
        "BUFFER_POOL": {
            "ingress_lossless_pool": {
                "type": "ingress",
                "mode": "dynamic",
                "size": "164110924",
                "xoff": "20181824",
            },
            "egress_lossless_pool": {"type": "egress", "mode": "static", "size": "164110924"},
        },
        "BUFFER_PROFILE": {
            "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "static_th": "82434938"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "static_th": "82434938"},
            "egress_lossy_profile": {"pool": "egress_lossless_pool", "size": "1778", "dynamic_th": "0"},
            "pg_lossless_400000_40m_profile": {
                "pool": "ingress_lossless_pool",
                "size": "18796",
                "xon": "0",
                "xoff": "445770",
                "xon_offset": "3556",
                "dynamic_th": "0",
            },
        },
        "BUFFER_PG": _per_port(
            lambda port: {
                f"{port}|0": {"profile": "ingress_lossy_profile"},
                f"{port}|3": {"profile": "pg_lossless_400000_40m_profile"},
            }
        ),
        "BUFFER_QUEUE": _per_port(
            lambda port: {
                f"{port}|0-2": {"profile": "egress_lossy_profile"},
                f"{port}|3": {"profile": "egress_lossless_profile"},
                f"{port}|4-7": {"profile": "egress_lossy_profile"},
            }
        ),
        "CABLE_LENGTH": {"AZURE": {port: "40m" for port in PORTS}},
        "PFC_WD": {
            "GLOBAL": {"POLL_INTERVAL": "200"},
            **{
                port: {"action": "drop", "detection_time": "200", "restoration_time": "200"} for port in PORTS
            },
        },
        "VLAN": {"Vlan100": {"vlanid": "100", "mtu": "9100", "admin_status": "up"}},
        "VLAN_MEMBER": {"Vlan100|Ethernet8": {"tagging_mode": "untagged"}},
        "MGMT_PORT": {
            "eth0": {"alias": "eth0", "admin_status": "up", "speed": "1000", "description": "OOB management"}
        },
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
        "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
    }


@pytest.fixture(scope="module")
def validator() -> SonicYangValidator:
    require_libyang()
    return SonicYangValidator(MODELS)


def _paths(issues: list[YangIssue]) -> list[str]:
    return [issue.path for issue in issues]


def _only_issue(issues: list[YangIssue]) -> YangIssue:
    assert len(issues) == 1, issues
    return issues[0]


def test_reference_example_is_clean(validator: SonicYangValidator) -> None:
    assert validator.validate(example_config()) == []


def test_mtu_above_9216_is_out_of_range(validator: SonicYangValidator) -> None:
    config = example_config()
    config["PORT"]["Ethernet0"]["mtu"] = "9300"
    issue = _only_issue(validator.validate(config))
    assert issue.path == "PORT/Ethernet0/mtu"
    assert "9300" in issue.message and "range" in issue.message


def test_wred_green_max_below_min_violates_must(validator: SonicYangValidator) -> None:
    config = example_config()
    config["WRED_PROFILE"]["ROCE_LOSSLESS"]["green_max_threshold"] = "1000"
    issue = _only_issue(validator.validate(config))
    assert issue.path == "WRED_PROFILE/ROCE_LOSSLESS/green_max_threshold"
    assert "Green max threshold must be greater than or equal to min threshold" in issue.message


def test_pfc_wd_detection_time_50_is_below_100(validator: SonicYangValidator) -> None:
    config = example_config()
    config["PFC_WD"]["Ethernet8"]["detection_time"] = "50"
    issue = _only_issue(validator.validate(config))
    assert issue.path == "PFC_WD/Ethernet8/detection_time"
    assert "range" in issue.message


def test_queue_referencing_missing_scheduler_breaks_leafref(validator: SonicYangValidator) -> None:
    config = example_config()
    config["QUEUE"]["Ethernet0|3"]["scheduler"] = "scheduler.missing"
    issue = _only_issue(validator.validate(config))
    assert issue.path == "QUEUE/Ethernet0|3/scheduler"
    assert "leafref" in issue.message and "scheduler.missing" in issue.message


def test_buffer_profile_pool_must_exist_unless_baseline_has_it(validator: SonicYangValidator) -> None:
    config = example_config()
    pools = config.pop("BUFFER_POOL")
    issues = validator.validate(config)
    assert issues, "profiles point at pools that do not exist"
    assert all(path.startswith("BUFFER_PROFILE/") and path.endswith("/pool") for path in _paths(issues))
    assert "BUFFER_PROFILE/pg_lossless_400000_40m_profile/pool" in _paths(issues)
    assert validator.validate(config, baseline={"BUFFER_POOL": pools}) == []


def test_baseline_entry_is_replaced_by_config_entry(validator: SonicYangValidator) -> None:
    baseline = {"BUFFER_POOL": {"ingress_lossless_pool": {"type": "sideways", "mode": "dynamic"}}}
    assert validator.validate(example_config(), baseline=baseline) == []


def test_issue_in_baseline_entry_is_marked(validator: SonicYangValidator) -> None:
    config = example_config()
    baseline = {"SCHEDULER": {"scheduler.spare": {"type": "FIFO"}}}
    issue = _only_issue(validator.validate(config, baseline=baseline))
    assert issue.path == "SCHEDULER/scheduler.spare/type"
    assert "baseline" in issue.message


def test_unknown_port_field_is_refused(validator: SonicYangValidator) -> None:
    config = example_config()
    config["PORT"]["Ethernet0"]["roce_mode"] = "lossless"
    issue = _only_issue(validator.validate(config))
    assert issue.path == "PORT/Ethernet0/roce_mode"
    assert "unknown field" in issue.message


def test_table_without_yang_model_is_refused(validator: SonicYangValidator) -> None:
    config = example_config()
    config["FOO_TABLE"] = {"x": {"a": "b"}}
    issue = _only_issue(validator.validate(config))
    assert issue.path == "FOO_TABLE"
    assert issue.message == "table FOO_TABLE has no YANG model; SONiC's config reload refuses it"


@pytest.mark.parametrize(
    ("table", "key", "leaf"),
    [
        ("WRED_PROFILE", "ROCE_LOSSLESS", "wred_green_enable"),
        ("MGMT_VRF_CONFIG", "vrf_global", "mgmtVrfEnabled"),
    ],
)
def test_boolean_written_True_is_refused(
    validator: SonicYangValidator, table: str, key: str, leaf: str
) -> None:
    config = example_config()
    config[table][key][leaf] = "True"
    issue = _only_issue(validator.validate(config))
    assert issue.path == f"{table}/{key}/{leaf}"
    assert "True" in issue.message


def test_json_true_becomes_True_like_configdbconnector(validator: SonicYangValidator) -> None:
    config = example_config()
    config["MGMT_VRF_CONFIG"]["vrf_global"]["mgmtVrfEnabled"] = True
    assert _paths(validator.validate(config)) == ["MGMT_VRF_CONFIG/vrf_global/mgmtVrfEnabled"]


def test_json_numbers_are_accepted_as_their_string_form(validator: SonicYangValidator) -> None:
    config = example_config()
    config["PORT"]["Ethernet0"]["mtu"] = 9100
    assert validator.validate(config) == []


def test_all_issues_are_collected_not_just_the_first(validator: SonicYangValidator) -> None:
    config = example_config()
    config["PORT"]["Ethernet0"]["mtu"] = "9300"
    config["PFC_WD"]["Ethernet0"]["detection_time"] = "50"
    config["QUEUE"]["Ethernet8|6"]["scheduler"] = "nope"
    config["WRED_PROFILE"]["ROCE_LOSSLESS"]["red_max_threshold"] = "1"
    config["BAR_TABLE"] = {"k": {}}
    assert sorted(_paths(validator.validate(config))) == [
        "BAR_TABLE",
        "PFC_WD/Ethernet0/detection_time",
        "PORT/Ethernet0/mtu",
        "QUEUE/Ethernet8|6/scheduler",
        "WRED_PROFILE/ROCE_LOSSLESS/red_max_threshold",
    ]


def test_missing_mandatory_leaf_does_not_cascade_into_leafrefs(validator: SonicYangValidator) -> None:
    config = example_config()
    del config["BUFFER_PROFILE"]["pg_lossless_400000_40m_profile"]["pool"]
    issue = _only_issue(validator.validate(config))
    assert issue.path == "BUFFER_PROFILE/pg_lossless_400000_40m_profile/pool"
    assert "Mandatory" in issue.message


def test_type1_map_value_out_of_range(validator: SonicYangValidator) -> None:
    config = example_config()
    config["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "16"
    issue = _only_issue(validator.validate(config))
    assert issue.path == "DSCP_TO_TC_MAP/ROCE/26"


def test_cable_length_type1_map_port_must_exist(validator: SonicYangValidator) -> None:
    config = example_config()
    config["CABLE_LENGTH"]["AZURE"]["Ethernet999"] = "40m"
    issue = _only_issue(validator.validate(config))
    assert issue.path == "CABLE_LENGTH/AZURE/Ethernet999"


def test_key_with_wrong_part_count_is_refused(validator: SonicYangValidator) -> None:
    config = example_config()
    config["QUEUE"]["Ethernet0"] = {"scheduler": "scheduler.0"}
    issue = _only_issue(validator.validate(config))
    assert issue.path == "QUEUE/Ethernet0"
    assert "QUEUE_LIST" in issue.message


def test_comma_port_list_in_queue_key_is_refused(validator: SonicYangValidator) -> None:
    config = example_config()
    config["QUEUE"]["Ethernet0,Ethernet8|7"] = {"scheduler": "scheduler.0"}
    assert _paths(validator.validate(config)) == ["QUEUE/Ethernet0,Ethernet8|7/ifname"]


def test_string_valued_leaf_list_and_union_encoding(validator: SonicYangValidator) -> None:
    # PORT.adv_speeds: CONFIG_DB keeps it as a comma string; YANG has leaf-list of union{uint32, "all"}.
    config = example_config()
    config["PORT"]["Ethernet0"]["adv_speeds"] = "400000,200000"
    config["PORT"]["Ethernet8"]["adv_speeds"] = "all"
    assert validator.validate(config) == []


def test_ordinary_leaf_list_must_be_a_json_list(validator: SonicYangValidator) -> None:
    config = example_config()
    config["MGMT_INTERFACE"]["eth0|192.0.2.10/24"]["forced_mgmt_routes"] = "198.51.100.0/24"
    assert _paths(validator.validate(config)) == ["MGMT_INTERFACE/eth0|192.0.2.10/24/forced_mgmt_routes"]
    config["MGMT_INTERFACE"]["eth0|192.0.2.10/24"]["forced_mgmt_routes"] = ["198.51.100.0/24"]
    assert validator.validate(config) == []


def test_empty_table_is_refused(validator: SonicYangValidator) -> None:
    config = example_config()
    config["VLAN_MEMBER"] = {}
    assert _paths(validator.validate(config)) == ["VLAN_MEMBER"]


def test_validate_file(validator: SonicYangValidator, tmp_path: Path) -> None:
    good = tmp_path / "config_db.json"
    good.write_text(json.dumps(example_config()), encoding="utf-8")
    assert validate_file(good, validator) == []
    bad = tmp_path / "broken.json"
    bad.write_text("{", encoding="utf-8")
    assert _paths(validate_file(bad, validator)) == [str(bad)]


def test_validator_does_not_mutate_its_input(validator: SonicYangValidator) -> None:
    config = example_config()
    config["PORT"]["Ethernet0"]["mtu"] = "9300"
    before = copy.deepcopy(config)
    validator.validate(config, baseline={"BUFFER_POOL": {}})
    assert config == before


def test_missing_binding_raises_yang_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "libyang", None)  # makes `import libyang` fail
    with pytest.raises(YangUnavailable) as raised:
        SonicYangValidator(MODELS)
    assert "pip install 'fabricgen[yang]'" in str(raised.value)
    assert "apt-get install libyang2-dev" in str(raised.value)


def test_table_shapes_come_from_the_schema(validator: SonicYangValidator) -> None:
    # Shapes no QoS table has (entries from sonic-yang-models' sample_config_db.json): a table mixing a
    # container with a 2-key list, container-only tables, JSON-list leaf-lists, a ';'-separated one.
    config = example_config()
    config["TELEMETRY_CLIENT"] = {
        "Global": {"encoding": "JSON_IETF", "retry_interval": "30", "src_ip": "30.57.185.38"},
        "DestinationGroup|HS": {"dst_addr": "30.57.186.214:8081,30.57.185.39:8081"},
    }
    config["FLEX_COUNTER_TABLE"] = {
        "PFCWD": {"FLEX_COUNTER_STATUS": "enable"},
        "QUEUE": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "10000"},
    }
    config["SWITCH_HASH"] = {
        "GLOBAL": {"ecmp_hash": ["DST_IP", "SRC_IP", "L4_DST_PORT"], "lag_hash": ["SRC_IP"]}
    }
    config["LOOPBACK_INTERFACE"] = {"Loopback0": {}, "Loopback0|10.1.0.1/32": {}}
    config["NTP"] = {"global": {"vrf": "mgmt", "src_intf": "eth0;Loopback0"}}
    assert validator.validate(config) == []
    config["TELEMETRY_CLIENT"]["Global"]["retry_interval"] = "thirty"
    config["FLEX_COUNTER_TABLE"]["PFCWD"]["FLEX_COUNTER_STATUS"] = "on"
    config["NTP"]["global"]["src_intf"] = "eth0;Loopback9"
    assert sorted(_paths(validator.validate(config))) == [
        "FLEX_COUNTER_TABLE/PFCWD/FLEX_COUNTER_STATUS",
        "NTP/global/src_intf",
        "TELEMETRY_CLIENT/Global/retry_interval",
    ]
