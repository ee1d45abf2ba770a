package actors

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/serviceaccount"
	"github.com/kubeactor/kubeactor/persistence"
)

// fakeTokens "signs" a token as the names it covers.
type fakeTokens struct{}

func (fakeTokens) GenerateToken(sa *corev1.ServiceAccount, s *corev1.Secret) (string, error) {
	return "token:" + sa.Namespace + "/" + sa.Name + "/" + string(sa.UID) + "/" + s.Name, nil
}

func getAccount(st *persistence.Store, ns, name string) *corev1.ServiceAccount {
	sa, _, _ := StoreAccounts{st}.ServiceAccount(ns, name)
	return sa
}

// tokenOf is the account's listed token secret, when it exists and holds its token.
func tokenOf(st *persistence.Store, sa *corev1.ServiceAccount) *corev1.Secret {
	if sa == nil {
		return nil
	}
	for _, r := range sa.Secrets {
		s, ok, _ := StoreAccounts{st}.Secret(sa.Namespace, r.Name)
		if ok && serviceaccount.IsToken(s, sa.Name, string(sa.UID)) && len(s.Data["token"]) > 0 {
			return s
		}
	}
	return nil
}

func TestServiceAccountControllers(t *testing.T) {
	st := openStore(t)
	s, err := Start(Options{Store: st, Log: quietLog(), RequestTimeout: 10 * time.Second, SyncPacing: -1,
		Resources:       append(append([]string(nil), testResources...), "serviceaccounts", "secrets"),
		ServiceAccounts: &serviceaccount.Options{Tokens: fakeTokens{}, RootCA: []byte("CA")},
		Admission:       admission.Chain{admission.NewServiceAccount(StoreAccounts{st})}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	ctx := context.Background()
	if _, err := s.Create(ctx, persistence.Key{Resource: "namespaces", Name: "dev"}, nsObj("dev")); err != nil {
		t.Fatal(err)
	}

	var first *corev1.Secret
	eventually(t, 10*time.Second, "the default account and its token", func() bool {
		first = tokenOf(st, getAccount(st, "dev", "default"))
		return first != nil
	})
	sa := getAccount(st, "dev", "default")
	if got, want := string(first.Data["token"]), "token:dev/default/"+string(sa.UID)+"/"+first.Name; got != want {
		t.Errorf("token %q, want %q", got, want)
	}
	if string(first.Data["ca.crt"]) != "CA" || string(first.Data["namespace"]) != "dev" || first.Type != corev1.SecretTypeServiceAccountToken {
		t.Errorf("token secret %+v", first)
	}

	// A pod naming no account gets the default one and its token.
	p := newPod("dev", "web").obj()
	got, err := s.Create(ctx, podKey("dev", "web"), p)
	if err != nil {
		t.Fatalf("create pod: %v", err)
	}
	if pod := got.(*corev1.Pod); pod.Spec.ServiceAccountName != "default" || len(pod.Spec.Volumes) != 1 ||
		pod.Spec.Volumes[0].Secret.SecretName != first.Name || pod.Spec.Containers[0].VolumeMounts[0].MountPath != admission.ServiceAccountMountPath {
		t.Errorf("pod spec %+v", pod.Spec)
	}

	// A deleted token secret is replaced.
	if _, _, err := s.Delete(ctx, persistence.Key{Resource: "secrets", Namespace: "dev", Name: first.Name}, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "a new token secret", func() bool {
		cur := getAccount(st, "dev", "default")
		tok := tokenOf(st, cur)
		return tok != nil && tok.Name != first.Name && len(cur.Secrets) == 1
	})

	// A deleted default account comes back, with a new uid; the old one's tokens go.
	old := getAccount(st, "dev", "default")
	oldToken := tokenOf(st, old)
	if _, _, err := s.Delete(ctx, persistence.Key{Resource: "serviceaccounts", Namespace: "dev", Name: "default"}, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the default account made again with its own token", func() bool {
		cur := getAccount(st, "dev", "default")
		return cur != nil && cur.UID != old.UID && tokenOf(st, cur) != nil &&
			gone(st, persistence.Key{Resource: "secrets", Namespace: "dev", Name: oldToken.Name})
	})

	// Another account gets its token; deleting it deletes the token.
	robot := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{Kind: "ServiceAccount", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "dev", UID: "uid-robot", CreationTimestamp: metav1.Now()}}
	if _, err := s.Create(ctx, persistence.Key{Resource: "serviceaccounts", Namespace: "dev", Name: "robot"}, robot); err != nil {
		t.Fatal(err)
	}
	var robotToken *corev1.Secret
	eventually(t, 10*time.Second, "robot's token", func() bool {
		robotToken = tokenOf(st, getAccount(st, "dev", "robot"))
		return robotToken != nil
	})
	if _, _, err := s.Delete(ctx, persistence.Key{Resource: "serviceaccounts", Namespace: "dev", Name: "robot"}, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "robot's token deleted with it", func() bool {
		return gone(st, persistence.Key{Resource: "secrets", Namespace: "dev", Name: robotToken.Name})
	})

	// A pod naming a missing account is refused.
	ghost := newPod("dev", "ghost").obj()
	ghost.Spec.ServiceAccountName = "ghost"
	if _, err := s.Create(ctx, podKey("dev", "ghost"), ghost); err == nil {
		t.Error("a pod naming a missing account was admitted")
	}
}
