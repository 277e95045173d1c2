#!/usr/bin/env bash
# netns-cluster.sh: a simulated multi-node cluster on one Linux machine, for hccl-java's topology tests.
#
#   tools/netns-cluster.sh up --nodes N [--rate 1gbit] [--latency 0]
#   tools/netns-cluster.sh status
#   tools/netns-cluster.sh down
#
# Each node is a network namespace hccl-node<i> (i = 0..N-1) with lo up and one veth, eth0, addressed
# 10.77.0.<i+1>/24. The other end of every node's veth is a port of the bridge br0 in the namespace
# hccl-switch. Ranks started in one node's namespace talk over its loopback (the kernel routes a
# namespace's own addresses through lo), ranks in different nodes through the bridge.
#
# The switch lives in a namespace of its own, not in the root namespace, so that the host's networking
# cannot be disturbed or disturb the cluster: no interface, address or route appears in the root
# namespace, the host's firewall (Docker's FORWARD DROP policy, br_netfilter) never sees the bridged
# frames, and `down` removes everything by deleting namespaces.
#
# Each inter-node link is shaped like a full-duplex NIC of --rate: a tbf qdisc on the node's eth0
# (what the node sends) and one on the switch port (what the node receives). --latency adds a one-way
# delay (netem, on the node's eth0 only, so a round trip between two nodes costs 2 x latency).
#
# `up` is idempotent and declarative: it creates what is missing, replaces the qdiscs with the ones asked
# for, and removes nodes numbered N and above. `down` removes every hccl-node* namespace and hccl-switch,
# whatever state a half-failed `up` left. Needs root and iproute2 (ip, tc).
set -euo pipefail

readonly NODE_PREFIX=hccl-node
readonly SWITCH=hccl-switch
readonly BRIDGE=br0
readonly SUBNET=10.77.0
readonly MAX_NODES=250   # addresses 10.77.0.1..250 in one /24

usage()
{
  cat <<EOF
Usage: $(basename "$0") up --nodes N [--rate RATE] [--latency DELAY]
       $(basename "$0") down
       $(basename "$0") status

  up       create (or update) N nodes, namespaces ${NODE_PREFIX}0..N-1 at ${SUBNET}.1..N,
           joined through bridge ${BRIDGE} in namespace ${SWITCH}
  down     remove every ${NODE_PREFIX}* namespace and ${SWITCH}
  status   print the namespaces, addresses and qdiscs that exist

  --nodes N        number of nodes, 1..${MAX_NODES}
  --rate RATE      per-direction rate of each node's link, in tc's units: bit, kbit, mbit, gbit
                   (default 1gbit)
  --latency DELAY  extra one-way delay per link, e.g. 0, 100us, 1ms (default 0: none)
EOF
}

die()
{
  echo "netns-cluster: $*" >&2
  exit 1
}

need_tools()
{
  local tool
  for tool in ip tc; do
    command -v "$tool" >/dev/null 2>&1 ||
      die "'$tool' not found; install iproute2 (apt-get install -y iproute2)"
  done
  [ "$(id -u)" -eq 0 ] || die "must run as root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
}

# The namespaces this script made, one per line (ip netns list may append "(id: N)").
our_namespaces()
{
  ip netns list | awk '{print $1}' | grep -E "^(${NODE_PREFIX}[0-9]+|${SWITCH})\$" || true
}

ns_exists()
{
  ip netns list | awk '{print $1}' | grep -qx -- "$1"
}

link_exists()   # namespace, device
{
  ip -n "$1" link show dev "$2" >/dev/null 2>&1
}

# Bits per second of a tc rate such as 1gbit or 500mbit, to size the token bucket.
rate_bits()
{
  local rate=${1,,} number unit
  [[ $rate =~ ^([0-9]+)(bit|kbit|mbit|gbit|tbit)$ ]] ||
    die "--rate '$1' is not a number followed by bit, kbit, mbit, gbit or tbit"
  number=${BASH_REMATCH[1]}
  unit=${BASH_REMATCH[2]}
  case $unit in
    bit) echo "$number" ;;
    kbit) echo $((number * 1000)) ;;
    mbit) echo $((number * 1000000)) ;;
    gbit) echo $((number * 1000000000)) ;;
    tbit) echo $((number * 1000000000000)) ;;
  esac
}

# Shapes one device's egress: tbf at the rate, behind a netem delay when one is asked for.
shape()   # namespace, device, rate, burst bytes, delay (or 0)
{
  local ns=$1 dev=$2 rate=$3 burst=$4 delay=$5
  # Replacing the root qdisc drops any child of an earlier `up`, so the result is the same either way.
  tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null || true
  if [ "$delay" = 0 ]; then
    tc -n "$ns" qdisc add dev "$dev" root handle 1: tbf rate "$rate" burst "$burst" latency 50ms ||
      die "tc tbf failed on $dev in $ns (is the sch_tbf kernel module available?)"
  else
    tc -n "$ns" qdisc add dev "$dev" root handle 1: netem delay "$delay" ||
      die "tc netem failed on $dev in $ns (is the sch_netem kernel module available?)"
    tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: tbf rate "$rate" burst "$burst" latency 50ms ||
      die "tc tbf failed on $dev in $ns (is the sch_tbf kernel module available?)"
  fi
}

cmd_up()
{
  local nodes="" rate=1gbit latency=0
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) [ $# -ge 2 ] || die "--nodes needs a value"; nodes=$2; shift 2 ;;
      --rate) [ $# -ge 2 ] || die "--rate needs a value"; rate=$2; shift 2 ;;
      --latency) [ $# -ge 2 ] || die "--latency needs a value"; latency=$2; shift 2 ;;
      -h|--help) usage; exit 0 ;;
      *) usage >&2; die "unknown argument to up: '$1'" ;;
    esac
  done
  [ -n "$nodes" ] || { usage >&2; die "up needs --nodes N"; }
  [[ $nodes =~ ^[0-9]+$ ]] && [ "$nodes" -ge 1 ] && [ "$nodes" -le "$MAX_NODES" ] ||
    die "--nodes must be a number in 1..$MAX_NODES, not '$nodes'"
  [[ $latency =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)?$ ]] || die "--latency '$latency' is not a delay such as 0, 100us or 2ms"
  [[ $latency =~ ^0+(\.0+)?(us|ms|s)?$ ]] && latency=0
  need_tools
  local bits burst
  bits=$(rate_bits "$rate")
  # One millisecond's worth of tokens (at least 16 KiB, more than a 64 KiB GSO packet needs to be split
  # anyway): a smaller bucket cannot reach the rate with the kernel's timer granularity.
  burst=$((bits / 8 / 1000))
  [ "$burst" -ge 16384 ] || burst=16384

  ns_exists "$SWITCH" || ip netns add "$SWITCH"
  ip -n "$SWITCH" link set lo up
  link_exists "$SWITCH" "$BRIDGE" || ip -n "$SWITCH" link add "$BRIDGE" type bridge
  ip -n "$SWITCH" link set "$BRIDGE" up

  local i ns port
  for ((i = 0; i < nodes; i++)); do
    ns=${NODE_PREFIX}$i
    port=port$i
    ns_exists "$ns" || ip netns add "$ns"
    ip -n "$ns" link set lo up
    # A port left without its peer by a half-failed run is recreated as a pair.
    if ! link_exists "$ns" eth0 || ! link_exists "$SWITCH" "$port"; then
      ip -n "$ns" link del eth0 2>/dev/null || true
      ip -n "$SWITCH" link del "$port" 2>/dev/null || true
      ip -n "$SWITCH" link add "$port" type veth peer name eth0 netns "$ns"
    fi
    ip -n "$SWITCH" link set "$port" master "$BRIDGE"
    ip -n "$SWITCH" link set "$port" up
    ip -n "$ns" addr replace "$SUBNET.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    shape "$ns" eth0 "$rate" "$burst" "$latency"
    shape "$SWITCH" "$port" "$rate" "$burst" 0
  done

  # Nodes beyond N from an earlier, larger `up`.
  for ns in $(our_namespaces); do
    if [[ $ns =~ ^${NODE_PREFIX}([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge "$nodes" ]; then
      ip netns del "$ns"
      ip -n "$SWITCH" link del "port${BASH_REMATCH[1]}" 2>/dev/null || true
    fi
  done
  echo "netns-cluster: $nodes node(s) up: ${NODE_PREFIX}0..$((nodes - 1)) at $SUBNET.1..$nodes," \
    "links $rate each way, one-way delay $latency"
}

cmd_down()
{
  [ $# -eq 0 ] || die "down takes no arguments"
  need_tools
  local ns pids
  for ns in $(our_namespaces); do
    pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ' || true)
    if [ -n "$pids" ]; then
      # Not killed here: they are someone's processes. Deleting the name still unplugs nothing they
      # use, but the namespace lives on until they exit.
      echo "netns-cluster: warning: processes still run in $ns: $pids" >&2
    fi
    ip netns del "$ns"
  done
  echo "netns-cluster: down"
}

cmd_status()
{
  [ $# -eq 0 ] || die "status takes no arguments"
  need_tools
  local ns found=0
  for ns in $(our_namespaces); do
    found=1
    echo "== $ns"
    ip -n "$ns" -br addr show
    tc -n "$ns" qdisc show | grep -vE '^qdisc noqueue ' || true
  done
  [ "$found" = 1 ] || echo "netns-cluster: no cluster (no ${NODE_PREFIX}* or ${SWITCH} namespace)"
}

main()
{
  [ $# -ge 1 ] || { usage >&2; exit 2; }
  local cmd=$1
  shift
  case $cmd in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    -h|--help|help) usage ;;
    *) usage >&2; die "unknown command '$cmd'" ;;
  esac
}

main "$@"
