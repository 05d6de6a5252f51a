#!/usr/bin/env bash
# fabricgen 0.2.0: RoCEv2 NIC settings of node3 through DCB netlink (iproute2 dcb), matching the
# switches' lossless recipe. Generated; do not edit by hand.
#
# Usage: fabricgen-dcb.sh [--apply | --check]
#   --apply  (default) change only what differs, then verify; exit 0 when every setting holds
#   --check  change nothing; print every difference; exit 1 when anything differs
# Exit status 2: usage error or a missing tool; 3: a tool did not finish within FABRICGEN_TOOL_TIMEOUT seconds
# (default 30; then it is killed and the script stops). DCB settings live in the NIC driver and are lost at
# reboot or driver reload: fabricgen-dcb.service runs --apply at boot. DCQCN/CNP are not set here (no generic
# interface): each run prints the values to give the NIC vendor's tool.
set -euo pipefail

SYSFS="${FABRICGEN_SYSFS:-/sys}"                    # the real /sys unless a test points it at a fake tree
CONFIGFS="${FABRICGEN_CONFIGFS:-/sys/kernel/config}"  # likewise configfs (RDMA-CM defaults)
TOOL_TIMEOUT="${FABRICGEN_TOOL_TIMEOUT:-30}"     # seconds each tool call may take

mode=apply
case "${1:-}" in
  "" | --apply) mode=apply ;;
  --check) mode=check ;;
  -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
  *) echo "usage: $0 [--apply | --check]" >&2; exit 2 ;;
esac

if ! [[ $TOOL_TIMEOUT =~ ^[0-9]+([.][0-9]+)?$ && $TOOL_TIMEOUT =~ [1-9] ]]; then
  echo "error: FABRICGEN_TOOL_TIMEOUT=$TOOL_TIMEOUT: expected seconds, a number above 0 (e.g. 30 or 2.5)" >&2
  exit 2
fi
command -v timeout >/dev/null || { echo "error: timeout not found (install coreutils)" >&2; exit 2; }
for tool in dcb ip; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found (install iproute2)" >&2; exit 2; }
done

drift=0
failed=0
notes=1

# Every external tool runs through bounded (readers, writes, setting's commands): this runs as root at boot, and a
# wedged driver or firmware can block a netlink, configfs or sysfs call forever.
exec {stderr}>&2  # bounded's error reaches the caller's stderr even from a reader that silences the tool's
trap 'exit 3' USR1
# bounded TOOL ARGS...: TOOL ARGS under coreutils timeout: SIGTERM after TOOL_TIMEOUT seconds, SIGKILL 5 s
# later. A tool that times out is named, and the script stops with exit 3: every later call would wait on the same
# wedged device. `exit` ends only the $(...) subshell a reader runs in, so USR1 asks the main shell to exit too.
bounded() {
  local status=0
  timeout -k 5 "$TOOL_TIMEOUT" "$@" || status=$?
  if ((status == 124 || status == 137)); then  # timeout's own status after its SIGTERM, or after SIGKILL
    echo "error: '$*' did not finish within ${TOOL_TIMEOUT}s (FABRICGEN_TOOL_TIMEOUT): stopped" >&"$stderr"
    kill -s USR1 "$$"
    exit 3
  fi
  return "$status"
}
# run COMMAND...: a function of this script as it is (it bounds the tools it calls), a tool through bounded.
run() { if declare -F "$1" >/dev/null; then "$@"; else bounded "$@"; fi; }

# setting NAME CURRENT WANTED -- COMMAND...: in check mode report a difference, in apply mode fix it.
setting() {
  local name=$1 current=$2 wanted=$3
  shift 4
  [[ "$current" == "$wanted" ]] && return 0
  if [[ $mode == check ]]; then
    printf 'DIFF %s: have "%s", want "%s"\n' "$name" "${current:-<unset>}" "$wanted"
    drift=1
  else
    printf 'SET  %s: "%s" -> "%s"\n' "$name" "${current:-<unset>}" "$wanted"
    # Keep going on failure so one refused setting does not leave the other NICs untouched; exit 1 at the end.
    run "$@" || { echo "error: $name: '$*' failed" >&2; failed=1; }
  fi
}
# note TEXT: said once per run (not again by the verify pass), on stderr.
note() { if ((notes)); then echo "note: $*" >&2; fi; }

# Readers print the current value in the same words as the wanted value (whitespace collapsed).
words() { local out; out=$(bounded "$@" 2>/dev/null) || true; set -f; echo $out; set +f; }
read_file() { if [[ -r $1 ]]; then words cat "$1"; fi; }
write_file() { printf '%s\n' "$2" | bounded tee "$1" >/dev/null; }
netdev_mtu() { read_file "$SYSFS/class/net/$1/mtu"; }

# dcb_ops IFACE: say once why dcb cannot configure a NIC, instead of leaving it to the failures that follow:
# no (IEEE) dcbnl ops, or DCBX not in host mode (bnxt_en refuses every IEEE set while its firmware agent owns DCB).
dcb_ops() {
  local dcbx
  ((notes)) || return 0
  if ! bounded dcb ets show dev "$1" prio-tc >/dev/null 2>&1; then
    echo "error: $1: no DCB netlink ETS (no such netdev, or a driver without IEEE dcbnl ops)" >&2
    return 0
  fi
  dcbx=$(words dcb dcbx show dev "$1")
  if [[ " $dcbx " != *" host "* ]]; then
    note "$1: DCBX is \"$dcbx\", not host: if the NIC firmware's LLDP/DCBX agent owns DCB, turn it off with the vendor's tool"
  fi
}
# read_ets IFACE ZERO_BW_TC...: prio-tc, tc-tsa and tc-bw in one line. A TC set to 0 % may read back as 100
# (mlx5 strict TCs) or as its share of a zero-BW ETS group: show those as 0. The ETS shares sum to 100, so the
# weighted TCs still pin the allocation.
read_ets() {
  local ifname=$1 word section="" out=()
  shift
  for word in $(words dcb ets show dev "$ifname" prio-tc tc-tsa tc-bw); do
    if [[ $word != *:* ]]; then
      section=$word
    elif [[ $section == tc-bw && " $* " == *" ${word%%:*} "* ]]; then
      word="${word%%:*}:0"
    fi
    out+=("$word")
  done
  echo "${out[*]}"
}
# dcb_caps IFACE TCS LOSSLESS: the driver's ets-cap and pfc-cap bound the TCs and the lossless TCs (bnxt_en
# answers more with a bare EINVAL, "Unknown error 234").
dcb_caps() {
  local ets pfc
  ((notes)) || return 0
  ets=$(words dcb ets show dev "$1" ets-cap)
  pfc=$(words dcb pfc show dev "$1" pfc-cap)
  ets=${ets#ets-cap } pfc=${pfc#pfc-cap }
  if [[ $ets =~ ^[0-9]+$ ]] && ((ets < $2)); then
    note "$1: the driver's ets-cap is $ets, fewer than the $2 traffic classes wanted: ETS will be refused"
  fi
  if [[ $pfc =~ ^[0-9]+$ ]] && ((pfc < $3)); then
    note "$1: the driver's pfc-cap is $pfc, fewer than the $3 lossless priorities wanted: PFC will be refused"
  fi
}
# dscp_setting IFACE DSCP:PRIO...: exactly these DSCP APP entries (none: flush them). The APP table is a table,
# not an array: `dcb app add 26:3` keeps an older 26:0. Compared as `dcb -N app show` prints the table: sorted
# by DSCP, then priority.
dscp_setting() {
  local ifname=$1 want=""
  shift
  if (($#)); then want="dscp-prio $*"; fi
  setting "$ifname dscp-prio" "$(words dcb -N app show dev "$ifname" dscp-prio)" "$want" -- dscp_sync "$ifname" "$@"
}
# dscp_sync IFACE DSCP:PRIO...: `replace` semantics -- one priority per DSCP -- with the last write the driver
# sees for each DSCP an add: a DSCP with an unwanted entry loses all its entries, then gets the wanted one.
# (`dcb app replace` adds first and deletes last, and bnxt_en's delete clears the DSCP's hardware entry even
# when another entry for it stays in the table.)
dscp_sync() {
  local ifname=$1 entry have redo=" " drop=() add=()
  shift
  have=" $(words dcb -N app show dev "$ifname" dscp-prio) "
  for entry in $have; do
    if [[ $entry == *:* && " $* " != *" $entry "* ]]; then redo+="${entry%%:*} "; fi
  done
  for entry in $have; do
    if [[ $entry == *:* && $redo == *" ${entry%%:*} "* ]]; then drop+=("$entry"); fi
  done
  for entry in "$@"; do
    if [[ $have != *" $entry "* || $redo == *" ${entry%%:*} "* ]]; then add+=("$entry"); fi
  done
  if [[ -n ${drop[*]:-} ]]; then bounded dcb app del dev "$ifname" dscp-prio "${drop[@]}" || return 1; fi
  if [[ -n ${add[*]:-} ]]; then bounded dcb app add dev "$ifname" dscp-prio "${add[@]}" || return 1; fi
}
# apptrust IFACE SELECTOR: which APP selector the NIC trusts, where iproute2 (>= 6.2) and the driver have it.
apptrust() {
  local have
  if ! have=$(bounded dcb apptrust show dev "$1" order 2>/dev/null); then
    note "$1: no dcb apptrust (iproute2 < 6.2, or a driver without apptrust ops): the DSCP APP entries alone classify"
    return 0
  fi
  setting "$1 apptrust" "$(set -f; echo $have)" "order: $2" -- dcb apptrust set dev "$1" order "$2"
}
# rdma_cm_port DEV: the RDMA-CM configfs port directory of DEV (as mlnx-tools' cma_roce_tos finds it). The group rdma_cm/DEV appears on
# mkdir, as cma_roce_tos does it; --check never creates it, so a missing group reads as unset.
rdma_cm_port() {
  local group="$CONFIGFS/rdma_cm/$1"
  if [[ ! -d $CONFIGFS/rdma_cm ]]; then
    note "no $CONFIGFS/rdma_cm: mount configfs and load rdma_cm to set the RoCE defaults of $1"
  elif [[ $mode == apply && ! -d $group ]]; then
    bounded mkdir "$group" 2>/dev/null || echo "error: cannot create $group (no RDMA device $1?)" >&2
  fi
  echo "$group/ports/1"
}

# ens1f0np0 (bnxt_re0) <-> leaf1:Ethernet8
nic_ens1f0np0() {
  local ifname=ens1f0np0 rdma=bnxt_re0 port
  dcb_ops "$ifname"
  dcb_caps "$ifname" 7 1
  setting "$ifname mtu" "$(netdev_mtu "$ifname")" '9000' -- ip link set dev "$ifname" mtu '9000'
  setting "$ifname dcbx" "$(words dcb dcbx show dev "$ifname")" 'host ieee' -- dcb dcbx set dev "$ifname" host ieee
  setting "$ifname ets" "$(read_ets "$ifname" 1 4 5 6 7)" 'prio-tc 0:0 1:0 2:2 3:3 4:0 5:0 6:6 7:0 tc-tsa 0:ets 1:strict 2:ets 3:ets 4:strict 5:strict 6:strict 7:strict tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0' -- dcb ets set dev "$ifname" prio-tc 0:0 1:0 2:2 3:3 4:0 5:0 6:6 7:0 tc-tsa 0:ets 1:strict 2:ets 3:ets 4:strict 5:strict 6:strict 7:strict tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0
  setting "$ifname pfc" "$(words dcb pfc show dev "$ifname" prio-pfc)" 'prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off' -- dcb pfc set dev "$ifname" prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off
  dscp_setting "$ifname" 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0 8:0 9:0 10:0 11:0 12:0 13:0 14:0 15:0 16:2 17:0 18:0 19:0 20:0 21:0 22:0 23:0 24:0 25:0 26:3 27:0 28:0 29:0 30:0 31:0 32:0 33:0 34:0 35:0 36:0 37:0 38:0 39:0 40:0 41:0 42:0 43:0 44:0 45:0 46:0 47:0 48:6 49:0 50:0 51:0 52:0 53:0 54:0 55:0 56:0 57:0 58:0 59:0 60:0 61:0 62:0 63:0
  apptrust "$ifname" dscp
  # DCQCN and CNP: no dcbnl interface. Broadcom: bnxt_re configfs cc/ or niccli; ConnectX: connectx.
  note "$ifname: no generic interface for DCQCN/CNP; set with the NIC vendor's tool: DCQCN on for priority 3, CNP DSCP 48 and 802.1p priority 6"
  port=$(rdma_cm_port "$rdma")
  setting "$rdma roce tos" "$(read_file "$port/default_roce_tos")" '104' -- write_file "$port/default_roce_tos" '104'
  setting "$rdma roce mode" "$(read_file "$port/default_roce_mode")" 'RoCE v2' -- write_file "$port/default_roce_mode" 'RoCE v2'
}

# ens2f0np0 (bnxt_re1) <-> leaf3:swp2
nic_ens2f0np0() {
  local ifname=ens2f0np0 rdma=bnxt_re1 port
  dcb_ops "$ifname"
  dcb_caps "$ifname" 7 1
  setting "$ifname mtu" "$(netdev_mtu "$ifname")" '9000' -- ip link set dev "$ifname" mtu '9000'
  setting "$ifname dcbx" "$(words dcb dcbx show dev "$ifname")" 'host ieee' -- dcb dcbx set dev "$ifname" host ieee
  setting "$ifname ets" "$(read_ets "$ifname" 1 4 5 6 7)" 'prio-tc 0:0 1:0 2:2 3:3 4:0 5:0 6:6 7:0 tc-tsa 0:ets 1:strict 2:ets 3:ets 4:strict 5:strict 6:strict 7:strict tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0' -- dcb ets set dev "$ifname" prio-tc 0:0 1:0 2:2 3:3 4:0 5:0 6:6 7:0 tc-tsa 0:ets 1:strict 2:ets 3:ets 4:strict 5:strict 6:strict 7:strict tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0
  setting "$ifname pfc" "$(words dcb pfc show dev "$ifname" prio-pfc)" 'prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off' -- dcb pfc set dev "$ifname" prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off
  dscp_setting "$ifname" 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0 8:0 9:0 10:0 11:0 12:0 13:0 14:0 15:0 16:2 17:0 18:0 19:0 20:0 21:0 22:0 23:0 24:0 25:0 26:3 27:0 28:0 29:0 30:0 31:0 32:0 33:0 34:0 35:0 36:0 37:0 38:0 39:0 40:0 41:0 42:0 43:0 44:0 45:0 46:0 47:0 48:6 49:0 50:0 51:0 52:0 53:0 54:0 55:0 56:0 57:0 58:0 59:0 60:0 61:0 62:0 63:0
  apptrust "$ifname" dscp
  # DCQCN and CNP: no dcbnl interface. Broadcom: bnxt_re configfs cc/ or niccli; ConnectX: connectx.
  note "$ifname: no generic interface for DCQCN/CNP; set with the NIC vendor's tool: DCQCN on for priority 3, CNP DSCP 48 and 802.1p priority 6"
  port=$(rdma_cm_port "$rdma")
  setting "$rdma roce tos" "$(read_file "$port/default_roce_tos")" '104' -- write_file "$port/default_roce_tos" '104'
  setting "$rdma roce mode" "$(read_file "$port/default_roce_mode")" 'RoCE v2' -- write_file "$port/default_roce_mode" 'RoCE v2'
}

all_nics() {
  nic_ens1f0np0
  nic_ens2f0np0
}

if [[ $mode == apply ]] && command -v modprobe >/dev/null; then
  bounded modprobe -q rdma_cm || true  # the RDMA-CM configfs comes with rdma_cm
fi
all_nics
if [[ $mode == apply ]]; then
  mode=check  # verify: every setting must now read back as wanted
  notes=0
  all_nics
  if ((drift || failed)); then echo "error: settings above did not take effect" >&2; exit 1; fi
  echo "ok: node3 NIC settings hold"
elif ((drift)); then
  exit 1
else
  echo "ok: node3 NIC settings match"
fi
