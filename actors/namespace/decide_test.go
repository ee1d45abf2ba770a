package namespace

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDecide(t *testing.T) {
	now := metav1.NewTime(time.Date(2015, 7, 10, 12, 0, 0, 0, time.UTC))
	active := &corev1.Namespace{}
	terminating := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}
	held := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now, Finalizers: []string{"x"}}}
	unfinalized := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}
	tests := []struct {
		name                   string
		ns                     *corev1.Namespace
		remaining, outstanding int
		swept                  bool
		want                   Step
	}{
		{name: "absent", ns: nil, want: Idle},
		{name: "active", ns: active, remaining: 3, want: Idle},
		{name: "contents to delete", ns: terminating, remaining: 3, want: DeleteContents},
		{name: "waiting for answers", ns: terminating, remaining: 3, outstanding: 2, swept: true, want: Idle},
		{name: "contents still terminating", ns: terminating, remaining: 1, swept: true, want: Recheck},
		{name: "empty", ns: terminating, swept: true, want: Remove},
		{name: "empty, held by a finalizer", ns: held, want: Idle},
		{name: "empty, not finalized", ns: unfinalized, swept: true, want: Finalize},
		{name: "contents left, not finalized", ns: unfinalized, remaining: 2, want: DeleteContents},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.ns, tc.remaining, tc.outstanding, tc.swept); got != tc.want {
				t.Fatalf("Decide = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestTerminate(t *testing.T) {
	ns := &corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	Terminate(ns)
	if ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("phase %s", ns.Status.Phase)
	}
}
