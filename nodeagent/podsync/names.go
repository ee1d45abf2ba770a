package podsync

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	podpkg "github.com/kubeactor/kubeactor/actors/pod"
)

// Label keys on every container the agent creates.
const (
	LabelPodName      = "io.kubernetes.pod.name"
	LabelPodNamespace = "io.kubernetes.pod.namespace"
	LabelPodUID       = "io.kubernetes.pod.uid"
	LabelContainer    = "io.kubernetes.container.name" // "POD" for the infra container
	LabelHash         = "io.kubernetes.container.hash" // hex
	LabelRestartCount = "io.kubernetes.container.restartCount"
	LabelGracePeriod  = "io.kubernetes.pod.terminationGracePeriod" // seconds
	LabelNode         = "io.kubeactor.node"                        // node name: several agents may share one engine
	InfraName         = "POD"
)

// namePrefix starts every engine name the agent gives a container.
const namePrefix = "k8s"

// hashJSON is the fnv-32a hash of v's JSON encoding as 8 hex digits.
func hashJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		// The API types always encode; keep the function total anyway.
		raw = []byte(fmt.Sprintf("%#v", v))
	}
	h := fnv.New32a()
	h.Write(raw)
	return fmt.Sprintf("%08x", h.Sum32())
}

// HashContainer is a stable hash of a container's spec (fnv-32a of its JSON
// encoding, 8 hex digits): a changed spec gives a different hash.
func HashContainer(c *corev1.Container) string {
	return hashJSON(c)
}

// SandboxHash is the hash of what the infra container is built from in the pod spec:
// host networking and the ports of every container (host ports are published on it).
// A different value means the sandbox must be recreated.
func SandboxHash(pod *corev1.Pod) string {
	infra := corev1.Container{Name: InfraName}
	if !pod.Spec.HostNetwork {
		for _, c := range pod.Spec.Containers {
			infra.Ports = append(infra.Ports, c.Ports...)
		}
	}
	return hashJSON(struct {
		HostNetwork bool             `json:"hostNetwork,omitempty"`
		HostIPC     bool             `json:"hostIPC,omitempty"`
		Container   corev1.Container `json:"container"`
	}{pod.Spec.HostNetwork, pod.Spec.HostIPC, infra})
}

// FullName is "<name>_<namespace>", the pod's name in messages.
func FullName(pod *corev1.Pod) string {
	return pod.Name + "_" + pod.Namespace
}

// ContainerName builds the engine name
// "k8s_<container>.<hash>_<pod>_<namespace>_<uid>_<suffix>" (the book's format,
// §2.5.6). suffix is 8 random hex digits chosen by the caller.
func ContainerName(pod *corev1.Pod, container, hash, suffix string) string {
	return strings.Join([]string{
		namePrefix, container + "." + hash, pod.Name, pod.Namespace, string(pod.UID), suffix,
	}, "_")
}

// Name is a parsed engine container name.
type Name struct{ Container, Hash, Pod, Namespace, UID, Suffix string }

// ParseContainerName reverses ContainerName; a leading "/" (as Docker lists names)
// is ignored. It reports false for names the agent did not build.
func ParseContainerName(name string) (Name, bool) {
	parts := strings.Split(strings.TrimPrefix(name, "/"), "_")
	if len(parts) != 6 || parts[0] != namePrefix {
		return Name{}, false
	}
	dot := strings.LastIndexByte(parts[1], '.')
	if dot < 0 {
		return Name{}, false
	}
	n := Name{
		Container: parts[1][:dot], Hash: parts[1][dot+1:],
		Pod: parts[2], Namespace: parts[3], UID: parts[4], Suffix: parts[5],
	}
	if n.Container == "" || n.Hash == "" || n.Pod == "" || n.Namespace == "" || n.UID == "" || n.Suffix == "" {
		return Name{}, false
	}
	return n, true
}

// Labels builds the label set of a container of pod on node. The grace period is
// the one its containers are stopped with (actors/pod's KillGrace).
func Labels(pod *corev1.Pod, node, container, hash string, restartCount int) map[string]string {
	return map[string]string{
		LabelPodName:      pod.Name,
		LabelPodNamespace: pod.Namespace,
		LabelPodUID:       string(pod.UID),
		LabelContainer:    container,
		LabelHash:         hash,
		LabelRestartCount: strconv.Itoa(restartCount),
		LabelGracePeriod:  strconv.FormatInt(podpkg.KillGrace(pod), 10),
		LabelNode:         node,
	}
}
