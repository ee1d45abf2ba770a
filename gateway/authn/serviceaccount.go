package authn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
)

// ServiceAccountIssuer is the iss claim of service-account tokens (Kubernetes 1.0's).
const ServiceAccountIssuer = "kubernetes/serviceaccount"

// The user and groups of a service account, as Kubernetes names them.
const (
	ServiceAccountUserPrefix   = "system:serviceaccount:"
	AllServiceAccountsGroup    = "system:serviceaccounts"
	ServiceAccountGroupPrefix  = "system:serviceaccounts:"
	serviceAccountClaimsPrefix = "kubernetes.io/serviceaccount/"
)

// ServiceAccountUsername is the user name of the account name in namespace.
func ServiceAccountUsername(namespace, name string) string {
	return ServiceAccountUserPrefix + namespace + ":" + name
}

// saClaims are the claims of a Kubernetes 1.0 service-account token.
type saClaims struct {
	jwt.RegisteredClaims
	Namespace  string `json:"kubernetes.io/serviceaccount/namespace"`
	SecretName string `json:"kubernetes.io/serviceaccount/secret.name"`
	Name       string `json:"kubernetes.io/serviceaccount/service-account.name"`
	UID        string `json:"kubernetes.io/serviceaccount/service-account.uid"`
}

// TokenSigner signs service-account tokens with --service-account-private-key-file:
// RS256 for an RSA key, ES256/ES384/ES512 for an EC key of that curve. It is the
// token controller's serviceaccount.TokenGenerator.
type TokenSigner struct {
	key    crypto.Signer
	method jwt.SigningMethod
}

// NewTokenSigner returns the signer of key (an *rsa.PrivateKey or *ecdsa.PrivateKey).
func NewTokenSigner(key crypto.Signer) (*TokenSigner, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return &TokenSigner{key: k, method: jwt.SigningMethodRS256}, nil
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return &TokenSigner{key: k, method: jwt.SigningMethodES256}, nil
		case elliptic.P384():
			return &TokenSigner{key: k, method: jwt.SigningMethodES384}, nil
		case elliptic.P521():
			return &TokenSigner{key: k, method: jwt.SigningMethodES512}, nil
		}
		return nil, errors.New("authn: service account key: unsupported elliptic curve")
	}
	return nil, fmt.Errorf("authn: service account key: a %T cannot sign tokens (want RSA or EC)", key)
}

// GenerateToken signs the token of secret, a token secret of sa.
func (s *TokenSigner) GenerateToken(sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error) {
	c := saClaims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: ServiceAccountIssuer, Subject: ServiceAccountUsername(sa.Namespace, sa.Name)},
		Namespace:        sa.Namespace, SecretName: secret.Name, Name: sa.Name, UID: string(sa.UID),
	}
	t, err := jwt.NewWithClaims(s.method, c).SignedString(s.key)
	if err != nil {
		return "", fmt.Errorf("authn: sign service account token: %w", err)
	}
	return t, nil
}

// AccountGetter reads the objects a token names (--service-account-lookup).
type AccountGetter interface {
	ServiceAccount(namespace, name string) (*corev1.ServiceAccount, bool, error)
	Secret(namespace, name string) (*corev1.Secret, bool, error)
}

// ServiceAccountTokens authenticates "Authorization: Bearer <JWT>" service-account
// tokens verified with Keys (--service-account-key-file). With Lookup
// (--service-account-lookup) the token's secret must still hold that token and its
// account still have that uid.
type ServiceAccountTokens struct {
	Keys   []crypto.PublicKey
	Lookup bool
	Getter AccountGetter

	// verified remembers the claims of tokens whose signature was verified (by the
	// token's hash): a signature is checked once, the lookup on every request.
	mu       sync.Mutex
	verified map[[sha256.Size]byte]saClaims
}

// maxVerified bounds the verified-token cache; it is emptied when full.
const maxVerified = 4096

var _ Authenticator = (*ServiceAccountTokens)(nil)

var saMethods = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512"}

// Authenticate implements Authenticator: a bearer token that is no JWT is not its
// kind; a JWT that does not verify, is not a service-account token or names objects
// that are gone is ErrUnauthorized.
func (a *ServiceAccountTokens) Authenticate(r *http.Request) (User, bool, error) {
	scheme, token, found := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "bearer") || strings.Count(token, ".") != 2 || len(a.Keys) == 0 {
		return User{}, false, nil
	}
	c, err := a.verify(token)
	if err != nil || c == nil {
		return User{}, false, err
	}
	if a.Lookup {
		if err := a.lookup(c, token); err != nil {
			return User{}, false, err
		}
	}
	return User{
		Name: ServiceAccountUsername(c.Namespace, c.Name), UID: c.UID,
		Groups: []string{AllServiceAccountsGroup, ServiceAccountGroupPrefix + c.Namespace},
	}, true, nil
}

// verify checks token's signature and claims (once per token: the result is
// cached). It returns nil claims and no error for a token that is no JWT.
func (a *ServiceAccountTokens) verify(token string) (*saClaims, error) {
	sum := sha256.Sum256([]byte(token))
	a.mu.Lock()
	c, ok := a.verified[sum]
	a.mu.Unlock()
	if ok {
		return &c, nil
	}
	keys := make([]jwt.VerificationKey, len(a.Keys))
	for i, k := range a.Keys {
		keys[i] = k
	}
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) {
		return jwt.VerificationKeySet{Keys: keys}, nil
	}, jwt.WithValidMethods(saMethods), jwt.WithIssuer(ServiceAccountIssuer))
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return nil, nil // not a JWT: another member's token
	case err != nil:
		return nil, fmt.Errorf("invalid service account token: %w", ErrUnauthorized)
	case c.Namespace == "" || c.Name == "" || c.SecretName == "" || c.UID == "":
		return nil, fmt.Errorf("service account token without its claims: %w", ErrUnauthorized)
	}
	if c.ExpiresAt != nil || c.NotBefore != nil {
		return &c, nil // time-bound (not one of ours): verified on every use
	}
	a.mu.Lock()
	if a.verified == nil || len(a.verified) >= maxVerified {
		a.verified = make(map[[sha256.Size]byte]saClaims)
	}
	a.verified[sum] = c
	a.mu.Unlock()
	return &c, nil
}

// lookup checks that the token's secret still holds it and its account still exists
// with its uid.
func (a *ServiceAccountTokens) lookup(c *saClaims, token string) error {
	if a.Getter == nil {
		return fmt.Errorf("service account lookup: no reader: %w", ErrUnauthorized)
	}
	s, found, err := a.Getter.Secret(c.Namespace, c.SecretName)
	if err != nil {
		return fmt.Errorf("service account lookup: %w", err)
	}
	if !found || subtle.ConstantTimeCompare(s.Data[corev1.ServiceAccountTokenKey], []byte(token)) != 1 {
		return fmt.Errorf("service account token: secret %s/%s is gone: %w", c.Namespace, c.SecretName, ErrUnauthorized)
	}
	sa, found, err := a.Getter.ServiceAccount(c.Namespace, c.Name)
	if err != nil {
		return fmt.Errorf("service account lookup: %w", err)
	}
	if !found || string(sa.UID) != c.UID {
		return fmt.Errorf("service account token: account %s/%s is gone: %w", c.Namespace, c.Name, ErrUnauthorized)
	}
	return nil
}
