#!/usr/bin/env bash
# Builds the images the project runs, from the sources in this repository, into the
# local Docker engine (there is no registry): kubeactor/pause, kubeactor/testserver,
# kubeactor/incluster and kubeactor/guestbook-frontend (FROM scratch with one static
# Go binary), kubeactor/busybox, and the guestbook's kubeactor/redis and kubeactor/redis-slave
# (from Debian's redis packages). Idempotent: an unchanged source gives the same image.
set -euo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
# The legacy builder is enough for FROM scratch + COPY, and buildx may be missing.
if ! docker buildx version >/dev/null 2>&1; then
  export DOCKER_BUILDKIT=0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# build_go_image IMAGE PKG BINARY DOCKERFILE-TAIL
build_go_image() {
  local image="$1" pkg="$2" bin="$3" tail="$4"
  local ctx="$work/$bin"
  mkdir -p "$ctx"
  CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$ctx/$bin" "$pkg"
  printf 'FROM scratch\nCOPY %s /%s\n%s\n' "$bin" "$bin" "$tail" >"$ctx/Dockerfile"
  local id
  # -q prints only the id; keep stderr for failures (the legacy builder warns there).
  if ! id="$(docker build -q -t "$image" "$ctx" 2>"$work/build.err")"; then
    cat "$work/build.err" >&2
    return 1
  fi
  echo "$image: built ${id#sha256:}"
}

build_go_image kubeactor/pause:latest ./images/pause pause \
  'ENTRYPOINT ["/pause"]'
build_go_image kubeactor/testserver:latest ./images/testserver testserver \
  "$(printf 'EXPOSE 8080\nENTRYPOINT ["/testserver"]')"
build_go_image kubeactor/incluster:latest ./images/incluster incluster \
  'ENTRYPOINT ["/incluster"]'
build_go_image kubeactor/guestbook-frontend:latest ./images/guestbook guestbook \
  "$(printf 'EXPOSE 80\nENTRYPOINT ["/guestbook"]')"
./images/busybox/build.sh
./images/redis/build.sh
