#!/usr/bin/env bash
# Layering inside the module: a lower layer never imports an upper one, and the pure
# decision packages link no protoactor, Pebble, Docker, netlink or iptables code, not
# even transitively. internal/ holds leaf packages that import none of the module: test
# support (which only test files import) and the server's memory policy (internal/memory).
# The images' programs import nothing of the module but images/pause, which is the
# program of nodeagent/pause (standard library only): the agent's own /pause and the
# image's are one program (pause, scrub, delete).
set -euo pipefail -f
cd "$(dirname "$0")/.."
mod=$(go list -m)
fail=0

# allowed IMPORTER-PATTERN ALLOWED-PATTERN...: which of the module's packages a
# package may import (patterns are anchored regular expressions over paths relative
# to the module; the package's own subtree is always allowed).
pure='actors/(admission|control|kinds|event|lifecycle|namespace|node|persistentvolume|pod|replication|resourcequota|scheduler|service|serviceaccount)(/.*)?'
rules=$(cat <<RULES
persistence(/.*)?	persistence/command
actors/kinds	actors/pod
actors/(admission|control|event|lifecycle|namespace|node|persistentvolume|pod|replication|resourcequota|scheduler|service|serviceaccount)(/.*)?	$pure persistence/command
actors	$pure persistence(/.*)? tracing
gateway(/.*)?	actors $pure persistence(/.*)? gateway(/.*)? tracing
nodeagent(/.*)?	nodeagent(/.*)? actors/(kinds|pod)
config	$pure
internal/.*	
tracing	
cli	.*
e2e	.*
images/pause	nodeagent/pause
images/.*	
	cli
RULES
)

go list -f '{{.ImportPath}} {{join .Imports " "}}' ./... | sed "s#$mod/\?##g" > /tmp/layers.$$
while read -r pkg imports; do
  [ -n "${pkg}" ] || pkg=""
  allowed=""
  matched=0
  while IFS=$'\t' read -r who may; do
    if [[ "$pkg" =~ ^(${who})$ ]]; then allowed="$may"; matched=1; break; fi
  done <<<"$rules"
  if [ "$matched" -eq 0 ]; then echo "layers: no rule for package '$pkg' (add one to .ci/layers.sh)"; fail=1; continue; fi
  for imp in $imports; do
    case "$imp" in */*|*.*) ;; *) continue ;; esac
    [[ "$imp" =~ ^[a-z0-9-]+\.[a-z] ]] && continue        # third party
    [[ "$imp" =~ ^(actors|persistence|gateway|nodeagent|cli|config|internal|e2e|images|tracing)(/|$) ]] || continue
    [[ -n "$pkg" && "$imp" == "$pkg"/* ]] && continue     # its own subtree
    ok=0
    for a in $allowed; do [[ "$imp" =~ ^(${a})$ ]] && { ok=1; break; }; done
    if [ "$ok" -eq 0 ]; then echo "layers: ${pkg:-main} imports $imp"; fail=1; fi
  done
done < /tmp/layers.$$
rm -f /tmp/layers.$$

# Pure packages link none of the engines, transitively.
for p in $(go list ./actors/... ./nodeagent/podsync | grep -v "^$mod/actors$"); do
  bad=$(go list -deps "$p" | grep -E '^(github.com/asynkron/protoactor-go|github.com/cockroachdb/pebble|github.com/docker/docker|github.com/vishvananda/netlink|github.com/coreos/go-iptables)' | head -1 || true)
  if [ -n "$bad" ]; then echo "layers: pure package ${p#"$mod"/} links $bad"; fail=1; fi
done

if [ "$fail" -ne 0 ]; then echo "layering broken"; exit 1; fi
echo "layering ok"
