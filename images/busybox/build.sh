#!/usr/bin/env bash
# Builds kubeactor/busybox:latest: a root filesystem made of Debian's static busybox
# (the busybox-static package), its applet links, /tmp and a minimal /etc, imported
# into the local Docker engine. There is no registry to pull from, so this is how the
# tests get a shell image.
set -euo pipefail

IMAGE="${IMAGE:-kubeactor/busybox:latest}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
mkdir -p "$root/bin"

# Find a static busybox: the installed package's, or the package's file fetched with
# apt-get download (no install needed).
if dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed'; then
  cp /bin/busybox "$root/bin/busybox"
else
  (cd "$work" && apt-get download -qq -o APT::Sandbox::User=root busybox-static >/dev/null)
  dpkg-deb -x "$work"/busybox-static_*.deb "$work/pkg"
  cp "$work/pkg/bin/busybox" "$root/bin/busybox"
fi
if command -v readelf >/dev/null 2>&1 && LC_ALL=C readelf -l "$root/bin/busybox" | grep -q 'INTERP'; then
  echo "busybox binary is not statically linked" >&2
  exit 1
fi
chmod 0755 "$root/bin/busybox"

# One link per applet, in the directory busybox lists it under (bin, sbin, usr/bin...).
"$root/bin/busybox" --list-full | while read -r applet; do
  [ "$applet" = "bin/busybox" ] && continue
  mkdir -p "$root/$(dirname "$applet")"
  ln -sf /bin/busybox "$root/$applet"
done
ln -sf /bin/busybox "$root/bin/sh"

mkdir -p "$root/tmp" "$root/etc" "$root/root" "$root/proc" "$root/sys" "$root/dev" "$root/var" "$root/home"
chmod 1777 "$root/tmp"
cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/home:/bin/false
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
GROUP

# Import only when the content changed, so reruns keep the same image id.
sum="$(cd "$root" && tar --sort=name --mtime='@0' --owner=0 --group=0 --numeric-owner -cf - . | sha256sum | cut -c1-16)"
if [ "$(docker image inspect -f '{{.Comment}}' "$IMAGE" 2>/dev/null || true)" = "rootfs-$sum" ]; then
  echo "$IMAGE: up to date"
  exit 0
fi
id="$(cd "$root" && tar --sort=name --mtime='@0' --owner=0 --group=0 --numeric-owner -cf - . |
  docker import --change 'CMD ["/bin/sh"]' --message "rootfs-$sum" - "$IMAGE")"
echo "$IMAGE: imported ${id#sha256:}"
