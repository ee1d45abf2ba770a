#!/usr/bin/env bash
# run.sh: the real Kubernetes anchor and kubeactor on the same workloads in one run, on
# the same machine (issue 18). First kube-apiserver and kube-scheduler v1.32.13 against
# one etcd member (the driver, cmd/anchor): 64 clients posting JSON pods with no scheduler,
# then 30,000 pods on 5,000 Ready nodes with kube-scheduler. Right after, kubeactor's
# e2e benchmarks of the same workloads against the repo's binary:
# BenchmarkServerCreatesNetHTTP and BenchmarkSchedule30kPodsOn5000Nodes. It prints one
# JSON object: both sides' figures and kubeactor's ratios to the real control plane.
#
#   bench/k8sanchor/run.sh                 # OUT=dir keeps the logs and JSON there
#   CREATES=20000 bench/k8sanchor/run.sh   # pods in the create workload (default 30000,
#                                          # as kubeactor's benchmark posts)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${OUT:-$(mktemp -d /tmp/k8sanchor-run.XXXXXX)}
mkdir -p "$out"
etcd=${ETCD:-$(command -v etcd || true)}
if [ -z "$etcd" ]; then echo "etcd is not installed (apt-get install etcd-server)" >&2; exit 1; fi

"$here/build.sh" >&2
(cd "$repo" && make build >&2)

# The machine is shared: the 1-minute load averages before each side go into the JSON.
load_k8s=$(cut -d' ' -f1 /proc/loadavg)
echo "== real Kubernetes v1.32.13 (logs in $out/k8s), load $load_k8s" >&2
"$here/bin/anchor" -bin "$here/bin" -etcd "$etcd" -work "$out/k8s" \
  -creates "${CREATES:-30000}" -clients 64 -nodes 5000 -pods 30000 >"$out/k8s.json"

load_ka=$(cut -d' ' -f1 /proc/loadavg)
echo "== kubeactor ($repo/bin/kubeactor), load $load_ka" >&2
(cd "$repo" && KUBEACTOR_BIN="$repo/bin/kubeactor" go test -count=1 -run '^$' \
  -bench '^(BenchmarkServerCreatesNetHTTP|BenchmarkSchedule30kPodsOn5000Nodes)$' \
  -benchtime 1x -timeout 40m ./e2e/ | tee "$out/kubeactor.txt" | go run ./.ci/benchjson >"$out/kubeactor.json")

load_end=$(cut -d' ' -f1 /proc/loadavg)
jq -n --arg l1 "$load_k8s" --arg l2 "$load_ka" --arg l3 "$load_end" --slurpfile k "$out/k8s.json" --slurpfile a "$out/kubeactor.json" '
  ($k[0]) as $k8s
  | ($a | map({key: (.benchmark | sub("-[0-9]+$"; "")), value: .metrics}) | from_entries) as $ka
  | {
      kubernetes: $k8s,
      kubeactor: {
        creates: $ka.BenchmarkServerCreatesNetHTTP,
        schedule: $ka.BenchmarkSchedule30kPodsOn5000Nodes
      },
      load_average_1m: {before_kubernetes: ($l1 | tonumber), before_kubeactor: ($l2 | tonumber), end: ($l3 | tonumber)},
      ratios: {
        creates: (($ka.BenchmarkServerCreatesNetHTTP["creates/s"] / $k8s.creates.creates_per_s) * 100 | round / 100),
        schedule: (($ka.BenchmarkSchedule30kPodsOn5000Nodes["pods/s"] / $k8s.schedule.pods_per_s) * 100 | round / 100)
      }
    }' | tee "$out/side-by-side.json"
