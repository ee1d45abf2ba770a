package podsync

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// ContainerRef is the object an event about one of the pod's containers is about:
// the pod, with the container as its fieldPath (spec.containers{name}), as the
// kubelet records Pulled, Created, Started, Killing, BackOff and probe events and
// kubectl describe shows them.
func ContainerRef(pod *corev1.Pod, container string) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		ResourceVersion: pod.ResourceVersion, FieldPath: fmt.Sprintf("spec.containers{%s}", container),
	}
}
