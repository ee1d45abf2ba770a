package scheduler

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NewBinding expresses the decision d about pod as the Binding that applies it: the
// winner as target (d.Node must be set), the pod's uid as precondition and the
// decision record, with the winner's scores, as its DecisionAnnotation.
func NewBinding(pod *corev1.Pod, d Decision, winnerScores []PriorityScore) *corev1.Binding {
	return &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID,
			Annotations: map[string]string{DecisionAnnotation: EncodeDecision(d, winnerScores)},
		},
		Target: corev1.ObjectReference{Kind: "Node", Name: d.Node},
	}
}
