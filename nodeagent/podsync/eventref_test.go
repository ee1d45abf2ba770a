package podsync

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestContainerRef(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1", ResourceVersion: "7"}}
	tests := []struct {
		name, container, want string
	}{
		{"app container", "frontend", "spec.containers{frontend}"},
		{"dashed name", "redis-slave", "spec.containers{redis-slave}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := ContainerRef(pod, tc.container)
			want := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web", UID: "u1", ResourceVersion: "7", FieldPath: tc.want}
			if *ref != want {
				t.Fatalf("ref = %+v, want %+v", *ref, want)
			}
		})
	}
}
