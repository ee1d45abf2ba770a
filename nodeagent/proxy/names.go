package proxy

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ServicePortName names one port of a service: the unit the proxy balances.
type ServicePortName struct {
	types.NamespacedName
	Port string
}

// String is the rule comment and log name: "<namespace>/<service>:<port name>".
func (s ServicePortName) String() string {
	return fmt.Sprintf("%s/%s:%s", s.Namespace, s.Name, s.Port)
}

// hash16 is 16 base32 characters of the sha256 of the parts: short, stable chain names.
func hash16(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return base32.StdEncoding.EncodeToString(h.Sum(nil))[:16]
}

// svcChain is the KUBE-SVC chain of a service port.
func svcChain(name ServicePortName, proto corev1.Protocol) string {
	return "KUBE-SVC-" + hash16(name.String(), string(proto))
}

// sepChain is the KUBE-SEP chain of one endpoint of a service port.
func sepChain(name ServicePortName, proto corev1.Protocol, endpoint string) string {
	return "KUBE-SEP-" + hash16(name.String(), string(proto), endpoint)
}
