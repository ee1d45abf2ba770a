#!/usr/bin/env bash
# Import boundaries: only actors/ imports protoactor, only persistence/ imports Pebble,
# only nodeagent/ imports Docker, netlink and iptables. Test files are held to it too.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m)
fail=0
check() { # import-prefix allowed-dir
  local bad
  bad=$(go list -test -f '{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... 2>/dev/null |
    awk -v p="$1" -v allow="$mod/$2" '{ if (index($1, allow) == 1) next; for (i = 2; i <= NF; i++) if (index($i, p) == 1) { print $1 " imports " $i; break } }' | sort -u)
  if [ -n "$bad" ]; then echo "$bad"; fail=1; fi
}
check github.com/asynkron/protoactor-go actors
check github.com/cockroachdb/pebble persistence
check github.com/docker/docker nodeagent
check github.com/vishvananda/netlink nodeagent
check github.com/coreos/go-iptables nodeagent
if [ "$fail" -ne 0 ]; then echo "import boundaries broken"; exit 1; fi
echo "import boundaries ok"
