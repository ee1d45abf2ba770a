package serviceaccount

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultName is the account every namespace has.
const DefaultName = "default"

// NeedsDefault tells whether ns is an active namespace without its default account
// (existing is the stored "default" account of ns, nil when there is none).
func NeedsDefault(ns *corev1.Namespace, existing *corev1.ServiceAccount) bool {
	return ns != nil && ns.DeletionTimestamp == nil && ns.Status.Phase != corev1.NamespaceTerminating && existing == nil
}

// Default is a namespace's default account, to be created.
func Default(namespace string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultName, Namespace: namespace}}
}

// IsToken tells whether s is a service-account token secret of the account named
// name (and, when s names one, of uid).
func IsToken(s *corev1.Secret, name string, uid string) bool {
	if s == nil || s.Type != corev1.SecretTypeServiceAccountToken || s.Annotations[corev1.ServiceAccountNameKey] != name {
		return false
	}
	u := s.Annotations[corev1.ServiceAccountUIDKey]
	return u == "" || uid == "" || u == uid
}

// TokenNamePrefix is how the names of an account's generated token secrets start;
// the controller appends a random suffix.
func TokenNamePrefix(account string) string { return account + "-token-" }

// Plan is what an account's token controller does next.
type Plan struct {
	// CreateToken: the account has no token secret; one is to be created.
	CreateToken bool
	// Fill are token secrets of the account without a token (made by a user with
	// only the annotation): the token, ca.crt and namespace are to be added.
	Fill []*corev1.Secret
	// Delete are token secrets that name the account but another uid (left by an
	// earlier account of the same name).
	Delete []string
	// Secrets is the account's .secrets as it should be, when it differs: refs to
	// its token secrets added, refs to generated token secrets that are gone dropped.
	Secrets []corev1.ObjectReference
	// Changed tells whether Secrets differs from the stored list.
	Changed bool
}

// Empty tells whether the plan does nothing.
func (p Plan) Empty() bool {
	return !p.CreateToken && len(p.Fill) == 0 && len(p.Delete) == 0 && !p.Changed
}

// Decide compares an account with the secrets of its namespace (in name order).
func Decide(sa *corev1.ServiceAccount, secrets []*corev1.Secret) Plan {
	var p Plan
	if sa == nil || sa.DeletionTimestamp != nil {
		return p
	}
	uid := string(sa.UID)
	exists := map[string]bool{}
	var tokens []string
	for _, s := range secrets {
		exists[s.Name] = true
		switch {
		case IsToken(s, sa.Name, uid):
			tokens = append(tokens, s.Name)
			if len(s.Data[corev1.ServiceAccountTokenKey]) == 0 {
				p.Fill = append(p.Fill, s)
			}
		case IsToken(s, sa.Name, ""):
			p.Delete = append(p.Delete, s.Name)
		}
	}
	p.CreateToken = len(tokens) == 0
	refs := make([]corev1.ObjectReference, 0, len(sa.Secrets)+len(tokens))
	listed := map[string]bool{}
	for _, r := range sa.Secrets {
		if !exists[r.Name] && strings.HasPrefix(r.Name, TokenNamePrefix(sa.Name)) {
			continue // a generated token that was deleted
		}
		if slices.Contains(p.Delete, r.Name) {
			continue
		}
		listed[r.Name] = true
		refs = append(refs, r)
	}
	for _, t := range tokens {
		if !listed[t] {
			refs = append(refs, corev1.ObjectReference{Name: t})
		}
	}
	if len(refs) != len(sa.Secrets) {
		p.Changed = true
	} else {
		for i := range refs {
			if refs[i] != sa.Secrets[i] {
				p.Changed = true
			}
		}
	}
	if p.Changed {
		p.Secrets = refs
	}
	return p
}

// TokenSecret is the token secret called name of sa, without its token: the
// annotations naming the account, the namespace and, when the cluster has one, its
// CA.
func TokenSecret(sa *corev1.ServiceAccount, name string, rootCA []byte) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: sa.Namespace, Annotations: map[string]string{
			corev1.ServiceAccountNameKey: sa.Name, corev1.ServiceAccountUIDKey: string(sa.UID),
		}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	Complete(s, rootCA)
	return s
}

// Complete adds the namespace and the CA to a token secret (the caller's copy).
func Complete(s *corev1.Secret, rootCA []byte) {
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[corev1.ServiceAccountNamespaceKey] = []byte(s.Namespace)
	if len(rootCA) > 0 {
		s.Data[corev1.ServiceAccountRootCAKey] = rootCA
	}
}

// Owned lists the token secrets among secrets that belong to the deleted account
// last (by name and uid): they go with it.
func Owned(last *corev1.ServiceAccount, secrets []*corev1.Secret) []string {
	var out []string
	for _, s := range secrets {
		if s.Annotations[corev1.ServiceAccountUIDKey] != "" && IsToken(s, last.Name, string(last.UID)) {
			out = append(out, s.Name)
		}
	}
	return out
}
