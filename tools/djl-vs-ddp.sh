#!/usr/bin/env bash
# Images per second of examples/djl-training's CNN, DJL + hccl-java against PyTorch DDP with Gloo (tools/ddp-shapes.py,
# the same model, data size and batch), both started by hcclrun (which gives each rank OMP_NUM_THREADS = cores / ranks),
# for docs/PERFORMANCE.md. Each run trains EPOCHS epochs; its figure is the median of epochs 2 on (the first warms up).
# usage: tools/djl-vs-ddp.sh [ROUNDS] [EPOCHS] [BATCH_PER_RANK] [NP...]     (defaults: 3 5 32 1 2 4)
#   NETNS=SPEC tools/djl-vs-ddp.sh ...   runs the ranks on simulated nodes (hcclrun --netns SPEC, such as
#   "hccl-node%d:2" after tools/netns-cluster.sh up --nodes 2), Gloo on the nodes' eth0.
# Needs: mvn -q install -DskipTests; the example built (docs/guide/djl.md); /usr/bin/python3 with torch
# (Debian's python3-torch).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; epochs=${2:-5}; batch=${3:-32}; shift $(( $# < 3 ? $# : 3 ))
nps=("$@"); [ ${#nps[@]} -gt 0 ] || nps=(1 2 4)
example='examples/djl-training/target/classes:examples/djl-training/target/dependency/*'
launch=(bin/hcclrun)
if [ -n "${NETNS:-}" ]; then
  launch+=(--netns "$NETNS")
  export GLOO_SOCKET_IFNAME=eth0
fi

# The median of the "N images/s" figures of epochs 2 on, from rank 0's lines.
median() {
  grep -o '[0-9]* images/s' | awk '{print $1}' | tail -n +2 | sort -n |
    awk '{v[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}

printf '%-6s %-3s %-18s %-18s %s\n' round np 'djl+hccl img/s' 'ddp-gloo img/s' ratio
for round in $(seq 1 "$rounds"); do
  for np in "${nps[@]}"; do
    djl=$("${launch[@]}" -np "$np" java -cp "$example" com.example.ShapesTraining "$epochs" "$batch" 2>&1 | median)
    ddp=$("${launch[@]}" -np "$np" /usr/bin/python3 tools/ddp-shapes.py "$epochs" "$batch" 2>&1 | median)
    ratio=$(awk -v a="$djl" -v b="$ddp" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}')
    printf '%-6s %-3s %-18s %-18s %s\n' "$round" "$np" "$djl" "$ddp" "$ratio"
  done
done
