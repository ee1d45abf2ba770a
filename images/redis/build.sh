#!/usr/bin/env bash
# Builds the guestbook's Redis images from Debian's redis-server and redis-tools
# packages: a root filesystem with the Redis binaries, the shared libraries ldd lists
# for them, the dynamic loader, busybox-static's sh, /etc/passwd, /tmp and /data,
# imported into the local Docker engine twice from the same tar:
#   kubeactor/redis:latest        CMD: a master without a config file or persistence
#   kubeactor/redis-slave:latest  CMD: /redis-slave.sh, a replica of $REDIS_MASTER_SERVICE_HOST
#                                 (GET_HOSTS_FROM=env) or of the DNS name redis-master
# Idempotent: an unchanged root filesystem keeps the existing images.
set -euo pipefail

IMAGE="${IMAGE:-kubeactor/redis:latest}"
SLAVE_IMAGE="${SLAVE_IMAGE:-kubeactor/redis-slave:latest}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
pkg="$work/pkg" # packages fetched with apt-get download are unpacked here
mkdir -p "$root" "$pkg"

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# download PACKAGE...: apt-get download into $work and unpack into $pkg; the package
# lists are refreshed once if the first attempt fails (a fresh machine has none).
download() {
  if ! (cd "$work" && apt-get download -qq -o APT::Sandbox::User=root "$@" >/dev/null 2>&1); then
    apt-get update -qq >/dev/null
    (cd "$work" && apt-get download -qq -o APT::Sandbox::User=root "$@" >/dev/null)
  fi
  local p
  for p in "$@"; do
    dpkg-deb -x "$work/${p}"_*.deb "$pkg"
  done
}

# The Redis binaries: the installed redis-tools', or the packages' files (redis-server
# is a link to redis-check-rdb, which redis-tools ships). The libraries redis-tools
# depends on that are not installed here are fetched the same way.
if installed redis-tools; then
  bindir=/usr/bin
else
  download redis-tools redis-server
  missing=()
  for dep in $(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances redis-tools | awk '/^  (Pre)?Depends: [^<]/ {print $2}'); do
    installed "$dep" || missing+=("$dep")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    download "${missing[@]}"
  fi
  bindir="$pkg/usr/bin"
fi
mkdir -p "$root/usr/bin"
cp "$bindir/redis-check-rdb" "$root/usr/bin/redis-server"
cp "$bindir/redis-cli" "$root/usr/bin/redis-cli"
chmod 0755 "$root/usr/bin/redis-server" "$root/usr/bin/redis-cli"

# The shared libraries and the loader, at the paths ldd resolves them to (unpacked
# ones go to the same multiarch directory as the host's).
libpath="$(find "$pkg" -name '*.so*' -printf '%h\n' 2>/dev/null | sort -u | paste -sd: || true)"
multiarch="$(dirname "$(ldd /bin/sh | awk '/libc\.so/ {print $3}')")"
for bin in "$root/usr/bin/redis-server" "$root/usr/bin/redis-cli"; do
  deps="$(LD_LIBRARY_PATH="$libpath" ldd "$bin")"
  if grep -q 'not found' <<<"$deps"; then
    echo "redis: unresolved libraries for $(basename "$bin"):" >&2
    grep 'not found' <<<"$deps" >&2
    exit 1
  fi
  # "libx.so.1 => /path (addr)" or "/lib64/ld-linux-x86-64.so.2 (addr)"; vdso has no path.
  awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$deps"
done | sort -u | while read -r lib; do
  dest="$lib"
  case "$lib" in "$pkg"/*) dest="$multiarch/$(basename "$lib")" ;; esac
  mkdir -p "$root$(dirname "$dest")"
  cp -L "$lib" "$root$dest"
done

# busybox-static's sh, for the slave's entry script (and kubectl exec).
mkdir -p "$root/bin"
if installed busybox-static; then
  cp /bin/busybox "$root/bin/busybox"
else
  download busybox-static
  cp "$pkg/bin/busybox" "$root/bin/busybox"
fi
chmod 0755 "$root/bin/busybox"
"$root/bin/busybox" --list-full | while read -r applet; do
  [ -e "$root/$applet" ] || [ -L "$root/$applet" ] && continue
  mkdir -p "$root/$(dirname "$applet")"
  ln -s /bin/busybox "$root/$applet"
done
ln -sf /bin/busybox "$root/bin/sh"

mkdir -p "$root/tmp" "$root/data" "$root/etc" "$root/root" "$root/proc" "$root/sys" "$root/dev"
chmod 1777 "$root/tmp"
chmod 0777 "$root/data"
cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
redis:x:999:999:redis:/data:/bin/false
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
redis:x:999:
nogroup:x:65534:
GROUP
cat >"$root/etc/nsswitch.conf" <<'NSS'
hosts: files dns
NSS

# The flags both roles share: no config file, listen everywhere, no persistence.
cat >"$root/redis-slave.sh" <<'SLAVE'
#!/bin/sh
# A replica of the guestbook's Redis master: its Service's cluster IP when
# GET_HOSTS_FROM=env (as the book's guestbook-redis-slave image does), else the DNS
# name redis-master.
master=redis-master
if [ "$GET_HOSTS_FROM" = "env" ]; then
  master="${REDIS_MASTER_SERVICE_HOST:-redis-master}"
fi
exec redis-server --protected-mode no --bind 0.0.0.0 --save "" --appendonly no \
  --replicaof "$master" 6379 "$@"
SLAVE
chmod 0755 "$root/redis-slave.sh"

tarball() {
  (cd "$root" && tar --sort=name --mtime='@0' --owner=0 --group=0 --numeric-owner -cf - .)
}

# Import only when the content or the command changed, so reruns keep the same image ids.
sum="$(tarball | sha256sum | cut -c1-16)"
# import IMAGE CMD-JSON
import() {
  local image="$1" cmd="$2" key
  key="$(printf '%s\n%s\n' "$sum" "$cmd" | sha256sum | cut -c1-16)"
  if [ "$(docker image inspect -f '{{.Comment}}' "$image" 2>/dev/null || true)" = "rootfs-$key" ]; then
    echo "$image: up to date"
    return 0
  fi
  local id
  id="$(tarball | docker import \
    --change 'WORKDIR /data' \
    --change 'EXPOSE 6379' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "CMD $cmd" \
    --message "rootfs-$key" - "$image")"
  echo "$image: imported ${id#sha256:}"
}
import "$IMAGE" '["redis-server", "--protected-mode", "no", "--bind", "0.0.0.0", "--save", "", "--appendonly", "no"]'
import "$SLAVE_IMAGE" '["/redis-slave.sh"]'
