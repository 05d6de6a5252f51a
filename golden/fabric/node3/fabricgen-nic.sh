#!/usr/bin/env bash
# fabricgen 0.2.0: RoCEv2 NIC settings of node3, matching the switches' lossless recipe.
# Generated; do not edit by hand.
#
# Usage: fabricgen-nic.sh [--apply | --check]
#   --apply  (default) change only what differs, then verify; exit 0 when every setting holds
#   --check  change nothing; print every difference; exit 1 when anything differs
# Exit status 2: usage error or a missing tool; 3: a tool did not finish within FABRICGEN_TOOL_TIMEOUT
# seconds (default 30; then it is killed and the script stops). ConnectX QoS settings are runtime
# only (lost at reboot or driver reload): fabricgen-nic.service runs --apply at boot.
set -euo pipefail

SYSFS="${FABRICGEN_SYSFS:-/sys}"  # the real /sys unless a test points it at a fake tree
TOOL_TIMEOUT="${FABRICGEN_TOOL_TIMEOUT:-30}"  # seconds each tool call may take

mode=apply
case "${1:-}" in
  "" | --apply) mode=apply ;;
  --check) mode=check ;;
  -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
  *) echo "usage: $0 [--apply | --check]" >&2; exit 2 ;;
esac

if ! [[ $TOOL_TIMEOUT =~ ^[0-9]+([.][0-9]+)?$ && $TOOL_TIMEOUT =~ [1-9] ]]; then
  echo "error: FABRICGEN_TOOL_TIMEOUT=$TOOL_TIMEOUT: expected seconds, a number above 0 (e.g. 30 or 2.5)" >&2
  exit 2
fi
command -v timeout >/dev/null || { echo "error: timeout not found (install coreutils)" >&2; exit 2; }
for tool in mlnx_qos dcb ip cma_roce_tos cma_roce_mode; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found (install mlnx-tools and iproute2)" >&2; exit 2; }
done

drift=0
failed=0

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

# Readers print the current value in the same words as the wanted value (whitespace collapsed).
words() { local out; out=$(bounded "$@" 2>/dev/null) || true; set -f; echo $out; set +f; }
read_file() { if [[ -r $1 ]]; then words cat "$1"; fi; }
write_file() { printf '%s\n' "$2" | bounded tee "$1" >/dev/null; }
# sed and head only filter the bounded tool's output: they end when it does.
mlnx_qos_field() { bounded mlnx_qos -i "$1" 2>/dev/null | sed -n "s/^$2: *//p" | head -n 1; }
# read_ets IFACE ZERO_BW_TC...: mlx5 reads a TC set to 0 % back as 100 (strict TCs, on kernels without the
# 2026 "report zero bandwidth for non-ETS traffic classes" fix) or as its share of the zero-BW ETS group.
# Show those TCs as 0: the ETS shares sum to 100, so the weighted TCs still pin the allocation.
read_ets() {
  local ifname=$1 word bw=()
  shift
  for word in $(words dcb ets show dev "$ifname" tc-bw); do
    if [[ $word == *:* && " $* " == *" ${word%%:*} "* ]]; then word="${word%%:*}:0"; fi
    bw+=("$word")
  done
  echo "$(words dcb ets show dev "$ifname" prio-tc) | $(words dcb ets show dev "$ifname" tc-tsa) | ${bw[*]}"
}
# dscp_setting IFACE DSCP:PRIO...: the DSCP APP table -- the NIC's DSCP map under DSCP trust -- holds these entries,
# all 64. mlx5 keeps one entry per DSCP (setting one replaces the old), so each DSCP whose entry differs is set, in
# one mlnx_qos call; only those DSCPs are shown ("26:-": no entry).
dscp_setting() {
  local ifname=$1 entry table have=() want=() args=()
  shift
  table=" $(words dcb -N app show dev "$ifname" dscp-prio) "
  for entry in "$@"; do
    if [[ $table != *" $entry "* ]]; then
      have+=("$(dscp_entries "$table" "${entry%%:*}")")
      want+=("$entry")
      args+=(--dscp2prio "set,${entry%%:*},${entry##*:}")
    fi
  done
  setting "$ifname dscp-prio" "${have[*]}" "${want[*]}" -- mlnx_qos -i "$ifname" "${args[@]}"
}
# dscp_entries TABLE DSCP: the table's entries for DSCP, comma-separated, or DSCP:- when it has none.
dscp_entries() {
  local entry found=""
  for entry in $1; do
    if [[ $entry == *:* && ${entry%%:*} == "$2" ]]; then found+="${found:+,}$entry"; fi
  done
  echo "${found:-$2:-}"
}
# cma_roce_tos prints errors on stdout: accept only a bare number as the current ToS.
roce_tos() { local v; v=$(words cma_roce_tos -d "$1" -p 1); if [[ $v =~ ^[0-9]+$ ]]; then echo "$v"; fi; }
roce_mode() { words cma_roce_mode -d "$1" -p 1; }

# DCQCN/CNP knobs: MLNX_OFED exposes them per netdev in sysfs; the upstream driver only in debugfs.
cc_dir() {
  local ofed="$SYSFS/class/net/$1/ecn"
  if [[ -d $ofed ]]; then echo "$ofed"; return; fi
  local bdf
  bdf=$(bounded readlink -f "$SYSFS/class/net/$1/device") || true  # no such netdev: the knobs read as unset
  echo "$SYSFS/kernel/debug/mlx5/${bdf##*/}/cc_params"
}
cc_setting() {  # cc_setting IFACE NAME OFED_FILE DEBUGFS_FILE WANTED
  local dir file
  dir=$(cc_dir "$1")
  if [[ $dir == */ecn ]]; then file="$dir/$3"; else file="$dir/$4"; fi
  if [[ -z $4 && $dir != */ecn ]]; then
    echo "note: $1: no $2 knob without MLNX_OFED; firmware ROCE_CC_PRIO_MASK (mlxconfig) decides" >&2
    return 0
  fi
  setting "$1 $2" "$(read_file "$file")" "$5" -- write_file "$file" "$5"
}

# ens1f0np0 (mlx5_0) <-> leaf1:Ethernet16
nic_ens1f0np0() {
  local ifname=ens1f0np0 rdma=mlx5_0
  setting "$ifname mtu" "$(read_file "$SYSFS/class/net/$ifname/mtu")" '9000' -- ip link set dev "$ifname" mtu '9000'
  setting "$ifname dcbx" "$(mlnx_qos_field "$ifname" 'DCBX mode')" 'OS controlled' -- mlnx_qos -i "$ifname" -d os
  setting "$ifname trust" "$(mlnx_qos_field "$ifname" 'Priority trust state')" 'dscp' -- mlnx_qos -i "$ifname" --trust 'dscp'
  dscp_setting "$ifname" 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0 8:0 9:0 10:0 11:0 12:0 13:0 14:0 15:0 16:2 17:0 18:0 19:0 20:0 21:0 22:0 23:0 24:0 25:0 26:3 27:0 28:0 29:0 30:0 31:0 32:0 33:0 34:0 35:0 36:0 37:0 38:0 39:0 40:0 41:0 42:0 43:0 44:0 45:0 46:0 47:0 48:6 49:0 50:0 51:0 52:0 53:0 54:0 55:0 56:0 57:0 58:0 59:0 60:0 61:0 62:0 63:0
  setting "$ifname pfc" "$(words dcb pfc show dev "$ifname" prio-pfc)" 'prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off' -- mlnx_qos -i "$ifname" --pfc '0,0,0,1,0,0,0,0'
  setting "$ifname ets" "$(read_ets "$ifname" 1 4 5 6 7)" 'prio-tc 0:0 1:0 2:2 3:3 4:0 5:0 6:6 7:0 | tc-tsa 0:ets 1:strict 2:ets 3:ets 4:strict 5:strict 6:strict 7:strict | tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0' -- mlnx_qos -i "$ifname" --prio_tc '0,0,2,3,0,0,6,0' --tsa 'ets,strict,ets,ets,strict,strict,strict,strict' --tcbw '40,0,10,50,0,0,0,0'
  cc_setting "$ifname" 'dcqcn np prio 3' 'roce_np/enable/3' '' '1'
  cc_setting "$ifname" 'dcqcn rp prio 3' 'roce_rp/enable/3' '' '1'
  cc_setting "$ifname" 'cnp dscp' 'roce_np/cnp_dscp' 'np_cnp_dscp' '48'
  cc_setting "$ifname" 'cnp 802.1p priority' 'roce_np/cnp_802p_prio' 'np_cnp_prio' '6'
  setting "$rdma roce tos" "$(roce_tos "$rdma")" '104' -- cma_roce_tos -d "$rdma" -p 1 -t '104'
  setting "$rdma roce mode" "$(roce_mode "$rdma")" 'RoCE v2' -- cma_roce_mode -d "$rdma" -p 1 -m 2
}

# ens2f0np0 (mlx5_1) <-> leaf2:Ethernet16
nic_ens2f0np0() {
  local ifname=ens2f0np0 rdma=mlx5_1
  setting "$ifname mtu" "$(read_file "$SYSFS/class/net/$ifname/mtu")" '9000' -- ip link set dev "$ifname" mtu '9000'
  setting "$ifname dcbx" "$(mlnx_qos_field "$ifname" 'DCBX mode')" 'OS controlled' -- mlnx_qos -i "$ifname" -d os
  setting "$ifname trust" "$(mlnx_qos_field "$ifname" 'Priority trust state')" 'dscp' -- mlnx_qos -i "$ifname" --trust 'dscp'
  dscp_setting "$ifname" 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0 8:0 9:0 10:0 11:0 12:0 13:0 14:0 15:0 16:2 17:0 18:0 19:0 20:0 21:0 22:0 23:0 24:0 25:0 26:3 27:0 28:0 29:0 30:0 31:0 32:0 33:0 34:0 35:0 36:0 37:0 38:0 39:0 40:0 41:0 42:0 43:0 44:0 45:0 46:0 47:0 48:6 49:0 50:0 51:0 52:0 53:0 54:0 55:0 56:0 57:0 58:0 59:0 60:0 61:0 62:0 63:0
  setting "$ifname pfc" "$(words dcb pfc show dev "$ifname" prio-pfc)" 'prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off' -- mlnx_qos -i "$ifname" --pfc '0,0,0,1,0,0,0,0'
  setting "$ifname ets" "$(read_ets "$ifname" 1 4 5 6 7)" 'prio-tc 0:0 1:0 2:2 3:3 4:0 5:0 6:6 7:0 | tc-tsa 0:ets 1:strict 2:ets 3:ets 4:strict 5:strict 6:strict 7:strict | tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0' -- mlnx_qos -i "$ifname" --prio_tc '0,0,2,3,0,0,6,0' --tsa 'ets,strict,ets,ets,strict,strict,strict,strict' --tcbw '40,0,10,50,0,0,0,0'
  cc_setting "$ifname" 'dcqcn np prio 3' 'roce_np/enable/3' '' '1'
  cc_setting "$ifname" 'dcqcn rp prio 3' 'roce_rp/enable/3' '' '1'
  cc_setting "$ifname" 'cnp dscp' 'roce_np/cnp_dscp' 'np_cnp_dscp' '48'
  cc_setting "$ifname" 'cnp 802.1p priority' 'roce_np/cnp_802p_prio' 'np_cnp_prio' '6'
  setting "$rdma roce tos" "$(roce_tos "$rdma")" '104' -- cma_roce_tos -d "$rdma" -p 1 -t '104'
  setting "$rdma roce mode" "$(roce_mode "$rdma")" 'RoCE v2' -- cma_roce_mode -d "$rdma" -p 1 -m 2
}

all_nics() {
  nic_ens1f0np0
  nic_ens2f0np0
}

if [[ $mode == apply ]] && command -v modprobe >/dev/null; then
  bounded modprobe -q rdma_cm || true  # cma_roce_tos/cma_roce_mode need the RDMA-CM configfs
fi
all_nics
if [[ $mode == apply ]]; then
  mode=check  # verify: every setting must now read back as wanted
  all_nics
  if ((drift || failed)); then echo "error: settings above did not take effect" >&2; exit 1; fi
  echo "ok: node3 NIC settings hold"
elif ((drift)); then
  exit 1
else
  echo "ok: node3 NIC settings match"
fi
