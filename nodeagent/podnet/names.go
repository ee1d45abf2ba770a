package podnet

import (
	"crypto/sha256"
	"encoding/hex"
)

// vethPrefix starts the name of every host-side veth this package creates. Docker
// names its own "veth" plus 7 hex digits, so the lengths never collide.
const vethPrefix = "veth"

// HostVethName is the name of the host end of a pod's veth pair: "veth" and the first
// 8 hex digits of the SHA-256 of the pod key (12 characters, within the kernel's 15).
func HostVethName(podKey string) string {
	sum := sha256.Sum256([]byte(podKey))
	return vethPrefix + hex.EncodeToString(sum[:4])
}
