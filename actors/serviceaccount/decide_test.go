package serviceaccount

import (
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNeedsDefault(t *testing.T) {
	now := metav1.NewTime(time.Unix(1, 0))
	tests := []struct {
		name     string
		ns       *corev1.Namespace
		existing *corev1.ServiceAccount
		want     bool
	}{
		{"active namespace without it", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}}, nil, true},
		{"already there", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}}, Default("dev"), false},
		{"namespace being deleted", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", DeletionTimestamp: &now}}, nil, false},
		{"namespace terminating", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}, nil, false},
		{"no namespace", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NeedsDefault(tt.ns, tt.existing); got != tt.want {
				t.Fatalf("NeedsDefault = %v, want %v", got, tt.want)
			}
		})
	}
}

func secret(name, sa, uid string, token string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "dev", Annotations: map[string]string{corev1.ServiceAccountNameKey: sa}},
		Type: corev1.SecretTypeServiceAccountToken, Data: map[string][]byte{}}
	if uid != "" {
		s.Annotations[corev1.ServiceAccountUIDKey] = uid
	}
	if token != "" {
		s.Data["token"] = []byte(token)
	}
	return s
}

func refs(names ...string) []corev1.ObjectReference {
	out := []corev1.ObjectReference{}
	for _, n := range names {
		out = append(out, corev1.ObjectReference{Name: n})
	}
	return out
}

func TestDecide(t *testing.T) {
	now := metav1.NewTime(time.Unix(1, 0))
	sa := func(secrets ...string) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "dev", UID: "u1"}, Secrets: refs(secrets...)}
	}
	opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "opaque", Namespace: "dev"}, Type: corev1.SecretTypeOpaque}
	tests := []struct {
		name    string
		sa      *corev1.ServiceAccount
		secrets []*corev1.Secret
		create  bool
		fill    []string
		delete  []string
		refs    []corev1.ObjectReference // nil: unchanged
	}{
		{name: "new account: a token is made", sa: sa(), create: true},
		{name: "settled", sa: sa("robot-token-aaaaa"), secrets: []*corev1.Secret{secret("robot-token-aaaaa", "robot", "u1", "t")}},
		{name: "token made, not listed yet", sa: sa(), secrets: []*corev1.Secret{secret("robot-token-aaaaa", "robot", "u1", "t")}, refs: refs("robot-token-aaaaa")},
		{name: "token deleted: dropped and made again", sa: sa("robot-token-aaaaa", "opaque"), secrets: []*corev1.Secret{opaque}, create: true, refs: refs("opaque")},
		{name: "a missing secret the user listed is kept", sa: sa("not-yet"), secrets: []*corev1.Secret{secret("robot-token-aaaaa", "robot", "u1", "t")}, refs: refs("not-yet", "robot-token-aaaaa")},
		{name: "a user's token secret without a token is filled", sa: sa(), secrets: []*corev1.Secret{secret("mine", "robot", "", "")}, fill: []string{"mine"}, refs: refs("mine")},
		{name: "an earlier account's token is deleted", sa: sa("robot-token-old"), secrets: []*corev1.Secret{secret("robot-token-old", "robot", "u0", "t")}, create: true, delete: []string{"robot-token-old"}, refs: refs()},
		{name: "another account's token is not mine", sa: sa(), secrets: []*corev1.Secret{secret("other-token-x", "other", "u9", "t")}, create: true},
		{name: "account being deleted: nothing", sa: func() *corev1.ServiceAccount { s := sa(); s.DeletionTimestamp = &now; return s }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Decide(tt.sa, tt.secrets)
			var fill []string
			for _, s := range p.Fill {
				fill = append(fill, s.Name)
			}
			if p.CreateToken != tt.create || !slices.Equal(fill, tt.fill) || !slices.Equal(p.Delete, tt.delete) {
				t.Fatalf("plan %+v, want create=%v fill=%v delete=%v", p, tt.create, tt.fill, tt.delete)
			}
			if p.Changed != (tt.refs != nil) || (tt.refs != nil && !reflect.DeepEqual(p.Secrets, tt.refs)) {
				t.Fatalf("secrets changed=%v %v, want %v", p.Changed, p.Secrets, tt.refs)
			}
		})
	}
}

func TestTokenSecret(t *testing.T) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "dev", UID: "u1"}}
	s := TokenSecret(sa, "robot-token-abcde", []byte("CA"))
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "robot-token-abcde", Namespace: "dev", Annotations: map[string]string{
			"kubernetes.io/service-account.name": "robot", "kubernetes.io/service-account.uid": "u1"}},
		Type: "kubernetes.io/service-account-token",
		Data: map[string][]byte{"namespace": []byte("dev"), "ca.crt": []byte("CA")},
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	if _, ok := TokenSecret(sa, "x", nil).Data["ca.crt"]; ok {
		t.Error("ca.crt without a CA")
	}
	if got := Owned(sa, []*corev1.Secret{s, secret("old", "robot", "u0", "t"), secret("unowned", "robot", "", "t")}); !slices.Equal(got, []string{"robot-token-abcde"}) {
		t.Errorf("Owned = %v", got)
	}
}
